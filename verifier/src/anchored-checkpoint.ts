import { readBounded } from '@notary/shared/fetch-body';
import { fromBase64, sha256Hex } from '@notary/trust/bytes';
import {
  type Checkpoint,
  parseSignedNote,
  type VerifierKey,
  verifyCheckpoint,
} from '@notary/trust/signed-note';
import { leafHash, verifyConsistency, verifyInclusion } from '@notary/trust/tlog';
import { z } from 'zod';
import { errorMessage } from './error-message.ts';
import { merkleProofHolds } from './merkle.ts';
import { data, foreign, type Message, msg, render } from './messages/index.ts';
import type { Receipt, ReceiptAnchoredCheckpoint } from './receipt.ts';
import { judgeServed, type OnlineLogReport, onlineReport } from './transparency-log.ts';

/**
 * The transparency log's checkpoint anchored on the chains (receipt version 4, `transparencyLog.anchored`). When
 * the service cuts an anchoring batch, the checkpoint its log signed last is the batch tree's last leaf, so the
 * root anchored on every chain (checks 3 and 4) commits to the log as it stood then; two anchored checkpoints that
 * are consistent (RFC 9162, 2.1.4) prove that nothing the log held at the older one was changed or removed since,
 * whatever the operator does with its database or its key.
 *
 * Checked offline: the checkpoint is signed by the log's key (the one that signed the receipt's checkpoint); its
 * leaf value (`checkpointLeaf`) with its siblings leads to the receipt's Merkle root, as the tree's last leaf (every
 * sibling on the left: no document can stand in its place, and it in a document's); and the receipt's own leaf is
 * in it (an inclusion proof at the anchored size) or came after it (a consistency proof from the anchored size to
 * the receipt's checkpoint, which holds the leaf). Online (`--online`): the newest checkpoint the log says it
 * anchored (`<log URL>/anchored`), signed by the same key and the last leaf of the batch root it names, extends
 * this one (a consistency proof built from the log's tiles).
 */

/** What the check of the anchored checkpoint found. */
export interface AnchoredCheckpointReport {
  /** `pending`: the proofs hold but no chain leg of the receipt is registered yet. */
  status: 'passed' | 'failed' | 'pending';
  /** The anchored checkpoint's tree size, when it verified. */
  size: number | null;
  /** The batch root that commits to it (the receipt's `merkle.root`). */
  batchRoot: string;
  /** How the receipt's leaf is tied to it: in it (`inclusion`), or after it (`consistency`). */
  link: 'inclusion' | 'consistency';
  /** The receipt's chain legs that are registered (checks 3 and 4 judge the root on each chain). */
  anchoredOn: ('evm' | 'stacks')[];
  /** The outcome, in English; `summaryMessage` as a message. */
  summary: string;
  summaryMessage: Message;
  /** What contradicts the receipt, in English (empty when none); `problemMessages` as messages. */
  problems: string[];
  problemMessages: Message[];
  /** With `--online`: the newest anchored checkpoint the log serves, compared with this one. */
  online?: AnchoredOnlineReport;
}

/** The newest anchored checkpoint the log serves against the receipt's (`--online`); statuses as the log's. */
export type AnchoredOnlineReport = OnlineLogReport;

/**
 * The value of the batch tree's leaf that anchors a checkpoint: the SHA-256 of its checkpoint text (the body the
 * log signs, without signature lines, so cosignatures added later do not change it), 64 lower-case hex. The batch
 * tree hashes it as any leaf (`SHA-256(0x00 || value)`, RFC 6962 2.1).
 * @throws Error when `note` is not a signed note.
 */
export async function checkpointLeaf(note: string): Promise<string> {
  return sha256Hex(new TextEncoder().encode(parseSignedNote(note).text));
}

/** Whether `siblings` is the path of a tree's last leaf: every sibling on its left (an odd node is promoted). */
export function isLastLeafPath(siblings: readonly { position: 'left' | 'right' }[]): boolean {
  return siblings.every((s) => s.position === 'left');
}

/**
 * Checks `anchored` (see the module comment) against the receipt it came in.
 * @param key the log's key, as the receipt's checkpoint was verified with it.
 * @param receiptCheckpoint the receipt's own checkpoint, verified (undefined when it did not verify).
 * @param online with `--online`: the fetch and the consistency check of two checkpoints from the log's tiles.
 */
export async function checkAnchoredCheckpoint(
  receipt: Receipt,
  anchored: ReceiptAnchoredCheckpoint,
  key: VerifierKey | undefined,
  receiptCheckpoint: Checkpoint | undefined,
  online?: { fetch: typeof fetch; consistent: ConsistencyCheck },
): Promise<AnchoredCheckpointReport> {
  const problems: Message[] = [];
  let checkpoint: Checkpoint | undefined;
  try {
    if (!key) throw new TypeError('no key to check it with');
    checkpoint = await verifyCheckpoint(anchored.checkpoint, key);
  } catch (e) {
    problems.push(msg('log.anchored.signature', { reason: foreign(errorMessage(e)) }));
  }
  problems.push(...(await batchProblems(receipt, anchored)));
  const leafIndex = receipt.transparencyLog?.leafIndex ?? 0;
  if (checkpoint) {
    const linked = linkHolds(receipt, anchored, checkpoint, receiptCheckpoint);
    if (!linked) {
      problems.push(
        anchored.link.kind === 'inclusion'
          ? msg('log.anchored.notIncluded', { leaf: leafIndex, size: checkpoint.size })
          : msg('log.anchored.notExtended', {
              receiptSize: receiptCheckpoint?.size ?? data('?'),
              size: checkpoint.size,
            }),
      );
    }
  }
  const anchoredOn = (['evm', 'stacks'] as const).filter((c) => receipt[c]?.status === 'registered');
  const size = checkpoint?.size ?? null;
  const facts = {
    size: size ?? 0,
    root: anchored.batchRoot,
    link:
      anchored.link.kind === 'inclusion'
        ? msg('log.anchored.included', { leaf: leafIndex })
        : msg('log.anchored.extended', { receiptSize: receiptCheckpoint?.size ?? 0 }),
  };
  const summaryMessage =
    problems.length > 0
      ? msg('log.anchored.failed', { size: size ?? data('?') })
      : anchoredOn.length > 0
        ? msg('log.anchored.summary', { ...facts, chains: anchoredOn.join(', ') })
        : msg('log.anchored.notYet', facts);
  const current =
    online && checkpoint && key && problems.length === 0
      ? await checkAnchoredOnline(online, receipt.transparencyLog?.url ?? '', key, {
          checkpoint,
          note: anchored.checkpoint,
        })
      : undefined;
  return {
    status: problems.length > 0 ? 'failed' : anchoredOn.length > 0 ? 'passed' : 'pending',
    size,
    batchRoot: anchored.batchRoot,
    link: anchored.link.kind,
    anchoredOn: [...anchoredOn],
    summary: render(summaryMessage, 'en'),
    summaryMessage,
    problems: problems.map((p) => render(p, 'en')),
    problemMessages: problems,
    ...(current ? { online: current } : {}),
  };
}

/** The checkpoint's place in the receipt's batch: the last leaf of the tree whose root the receipt anchors. */
async function batchProblems(receipt: Receipt, anchored: ReceiptAnchoredCheckpoint): Promise<Message[]> {
  const merkle = receipt.merkle;
  if (!merkle) return [msg('log.anchored.noBatch')];
  if (anchored.batchRoot !== merkle.root) {
    return [msg('log.anchored.otherRoot', { root: anchored.batchRoot, merkleRoot: merkle.root })];
  }
  let leaf: string;
  try {
    leaf = await checkpointLeaf(anchored.checkpoint);
  } catch (e) {
    return [msg('log.anchored.signature', { reason: foreign(errorMessage(e)) })];
  }
  const last =
    isLastLeafPath(anchored.siblings) &&
    anchored.leafIndex === merkle.leafCount - 1 &&
    merkle.leafIndex !== anchored.leafIndex &&
    !isLastLeafPath(merkle.siblings);
  if (!last || !(await merkleProofHolds(leaf, anchored, merkle.root))) {
    return [msg('log.anchored.notInBatch', { root: merkle.root })];
  }
  return [];
}

/** Whether the receipt's leaf is in the anchored tree, or the receipt's checkpoint extends it. */
function linkHolds(
  receipt: Receipt,
  anchored: ReceiptAnchoredCheckpoint,
  checkpoint: Checkpoint,
  receiptCheckpoint: Checkpoint | undefined,
): boolean {
  const block = receipt.transparencyLog;
  if (!block) return false;
  const proof = anchored.link.proof.map(fromBase64);
  if (anchored.link.kind === 'inclusion') {
    return verifyInclusion(
      leafHash(fromBase64(block.entry)),
      block.leafIndex,
      checkpoint.size,
      proof,
      checkpoint.root,
    );
  }
  return (
    receiptCheckpoint !== undefined &&
    block.leafIndex >= checkpoint.size &&
    receiptCheckpoint.size > checkpoint.size &&
    verifyConsistency(checkpoint.size, receiptCheckpoint.size, proof, checkpoint.root, receiptCheckpoint.root)
  );
}

/**
 * Whether the log at `base` proves `newer` extends `older` (RFC 9162, 2.1.4), from its tiles; throws when the
 * log cannot be read (`transparency-log.ts`, `servedConsistency`).
 */
export type ConsistencyCheck = (
  f: typeof fetch,
  base: string,
  older: Checkpoint,
  newer: Checkpoint,
) => Promise<boolean>;

/** What `<log URL>/anchored` serves: the newest checkpoint the log anchored and its place in its batch. */
export const ServedAnchoredSchema = z
  .object({
    checkpoint: z.string().min(1),
    batchRoot: z.string().regex(/^[0-9a-f]{64}$/),
    leafIndex: z.number().int().nonnegative(),
    siblings: z
      .array(
        z.object({ position: z.enum(['left', 'right']), hash: z.string().regex(/^[0-9a-f]{64}$/) }).strict(),
      )
      .max(64),
    anchors: z
      .array(z.object({ chain: z.enum(['evm', 'stacks']), txHash: z.string(), status: z.string() }).strict())
      .max(8),
  })
  .strict();
export type ServedAnchored = z.infer<typeof ServedAnchoredSchema>;

/** How long the request may take, in milliseconds, and how much it may read (a note and a short proof). */
const ANCHORED_TIMEOUT_MS = 15_000;
const ANCHORED_MAX_BYTES = 64 * 1024;

/**
 * The newest checkpoint the log at `url` anchored against the receipt's (see `AnchoredOnlineReport`): its
 * signature by `key`, its place (last leaf) in the batch root it names, and the consistency of the two, the older
 * one a prefix of the newer. Never throws. Whether that newer root is on the chains is not judged here (its
 * anchors are listed by the log for anyone to look up).
 */
export async function checkAnchoredOnline(
  online: { fetch: typeof fetch; consistent: ConsistencyCheck },
  url: string,
  key: VerifierKey,
  receipt: { checkpoint: Checkpoint; note: string },
): Promise<AnchoredOnlineReport> {
  const base = url.replace(/\/+$/, '');
  const old = receipt.checkpoint;
  const result = onlineReport(`${base}/anchored`, receipt.note);
  const unavailable = (e: unknown) =>
    msg('log.anchored.online.unavailable', { url: base, reason: foreign(errorMessage(e)) });
  let served: ServedAnchored;
  let now: Checkpoint;
  try {
    const res = await online.fetch(`${base}/anchored`, { signal: AbortSignal.timeout(ANCHORED_TIMEOUT_MS) });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`${base}/anchored: HTTP ${res.status}`);
    }
    const text = new TextDecoder().decode(await readBounded(res, ANCHORED_MAX_BYTES));
    served = ServedAnchoredSchema.parse(JSON.parse(text));
    now = await verifyCheckpoint(served.checkpoint, key);
    const leaf = await checkpointLeaf(served.checkpoint);
    if (!isLastLeafPath(served.siblings) || !(await merkleProofHolds(leaf, served, served.batchRoot))) {
      throw new Error(`the checkpoint is not the last leaf of the batch root ${served.batchRoot} it names`);
    }
  } catch (e) {
    return result('unavailable', null, unavailable(e));
  }
  const sizes = { size: now.size, anchoredSize: old.size, url: base, root: served.batchRoot };
  return judgeServed(
    result,
    { old, now, served: served.checkpoint },
    () => online.consistent(online.fetch, base, old, now),
    {
      rolledBack: msg('log.anchored.online.fork', sizes),
      fork: msg('log.anchored.online.fork', sizes),
      consistent: msg('log.anchored.online.consistent', sizes),
      unavailable,
    },
  );
}

/** The report's lines for the anchored checkpoint (English), indented under the log's. */
export function anchoredLines(report: AnchoredCheckpointReport): string[] {
  const lines = [`  ${report.summary}`];
  for (const p of report.problems) lines.push(`    ${p}`);
  if (report.online) {
    lines.push(`    ${report.online.reason}`);
    const evidence = report.online.evidence;
    if (evidence) {
      const indent = (note: string) =>
        note
          .trimEnd()
          .split('\n')
          .map((l) => `      ${l}`);
      lines.push(
        '    the anchored checkpoint of the receipt:',
        ...indent(evidence.receipt),
        '    the anchored checkpoint served:',
        ...indent(evidence.served),
      );
    }
  }
  return lines;
}
