import { readBounded } from '@notary/shared/fetch-body';
import { equalBytes, fromBase64, toHex } from '@notary/trust/bytes';
import { parseCosignerKey, verifyCosignatures } from '@notary/trust/cosignature';
import {
  type Checkpoint,
  parseVerifierKey,
  type VerifierKey,
  verifyCheckpoint,
} from '@notary/trust/signed-note';
import {
  consistencyProof,
  HASH_SIZE,
  leafHash,
  TILE_WIDTH,
  tilePath,
  tileReader,
  tilesRead,
  tileWidth,
  verifyConsistency,
  verifyInclusion,
} from '@notary/trust/tlog';
import { decodeLeaf } from '@notary/trust/tlog-leaf';
import {
  type AnchoredCheckpointReport,
  anchoredLines,
  checkAnchoredCheckpoint,
} from './anchored-checkpoint.ts';
import { errorMessage } from './error-message.ts';
import { foreign, type Message, msg, render } from './messages/index.ts';
import type { Receipt } from './receipt.ts';

/**
 * The receipt's place in the service's transparency log (receipt version 3), checked offline: the leaf names the
 * receipt's serial and SHA-256, its inclusion proof leads to the checkpoint's root (RFC 9162, 2.1.3.2), and the
 * checkpoint is signed (C2SP signed-note) by the log key the user gave (`--log-key`), obtained from anyone but the
 * receipt. Without a key, the signature is checked against the key the receipt names, which proves only that the
 * receipt is self-consistent: `keyChecked` says so.
 */
export interface LogReport {
  status: 'passed' | 'failed';
  origin: string;
  url: string;
  leafIndex: number;
  /** The checkpoint's tree size, when it could be read. */
  treeSize: number | null;
  /** Whether the checkpoint's signature was checked against a key the user gave. */
  keyChecked: boolean;
  /**
   * The witnesses' cosignatures (C2SP tlog-cosignature) checked against the witness keys given (`--witness`):
   * the names of those whose cosignature verified and the quorum asked for; absent when no key was given.
   */
  witnesses?: { cosignedBy: string[]; quorum: number };
  /** What contradicts the receipt, in English; empty when passed. */
  problems: string[];
  /** With `--online`: the log's current checkpoint compared with the receipt's. */
  online?: OnlineLogReport;
  /** The log's checkpoint anchored with the receipt's batch (receipt version 4), when the receipt has one. */
  anchored?: AnchoredCheckpointReport;
}

/**
 * The receipt's checkpoint against the one the log serves now (`--online`): the newer tree must contain the
 * receipt's as a prefix (RFC 9162, 2.1.4), the consistency proof built from the log's tiles (C2SP tlog-tiles) and
 * checked against both signed roots, so nothing the log serves is trusted but what its key signed.
 * - `consistent`: the log has only grown since the receipt;
 * - `fork`: the log signed a tree the receipt's is not a prefix of (a leaf changed, removed or inserted, or a
 *   rollback): `evidence` holds both signed checkpoints;
 * - `unavailable`: the log could not be read (unreachable, a tile missing, a checkpoint its key did not sign).
 */
export interface OnlineLogReport {
  status: 'consistent' | 'fork' | 'unavailable';
  /** The log's URL prefix asked. */
  url: string;
  /** The tree size the log serves now, when its checkpoint verified. */
  servedSize: number | null;
  /** The outcome in English. */
  reason: string;
  /** `reason` as a message. */
  reasonMessage: Message;
  /** With a fork: the receipt's signed checkpoint and the one served, as they were read. */
  evidence?: { receipt: string; served: string };
}

/**
 * Checks `receipt.transparencyLog` (see `LogReport`); undefined when the receipt has none.
 * @param logKeys verifier keys (`<name>+<hex id>+<base64 key>`) the user trusts for the log; empty: none given.
 * @param witnesses witness verifier keys (type 0x04) the user trusts (`--witness`) and how many of them must have
 *   cosigned the checkpoint (`--witness-quorum`, default all); no keys: cosignatures are not checked.
 * @param online with `--online`: the fetch that reads the log's current checkpoint and tiles (`checkOnline`).
 */
export async function checkLogProof(
  receipt: Receipt,
  logKeys: readonly string[],
  witnesses: { keys: readonly string[]; quorum?: number } = { keys: [] },
  online?: { fetch: typeof fetch },
): Promise<LogReport | undefined> {
  const block = receipt.transparencyLog;
  if (!block) return undefined;
  const problems: string[] = [];
  const keyChecked = logKeys.length > 0;
  let checkpoint: Checkpoint | undefined;
  let key: VerifierKey | undefined;
  try {
    const keys = (keyChecked ? logKeys : [block.verifierKey]).map(parseVerifierKey);
    key = keys.find((k) => k.name === block.origin);
    if (!key) throw new TypeError(`no key given for the log ${block.origin}`);
    checkpoint = await verifyCheckpoint(block.checkpoint, key);
  } catch (e) {
    problems.push(`checkpoint: ${errorMessage(e)}`);
  }
  const cosigned =
    witnesses.keys.length > 0 ? await checkCosignatures(block.checkpoint, witnesses) : undefined;
  if (cosigned?.problem) problems.push(cosigned.problem);
  const entry = fromBase64(block.entry);
  const leaf = decodeLeaf(entry);
  if (!leaf) problems.push('the leaf is not a notary-log-leaf/1 entry');
  else {
    if (leaf.serial !== receipt.document.serialNumber)
      problems.push(`the leaf names serial ${leaf.serial}, the receipt ${receipt.document.serialNumber}`);
    if (leaf.sha256 !== receipt.document.sha256)
      problems.push(`the leaf names SHA-256 ${leaf.sha256}, the receipt ${receipt.document.sha256}`);
  }
  if (checkpoint) {
    const proof = block.inclusionProof.map(fromBase64);
    if (!verifyInclusion(leafHash(entry), block.leafIndex, checkpoint.size, proof, checkpoint.root)) {
      problems.push(
        `the inclusion proof of leaf ${block.leafIndex} does not lead to root ${toHex(checkpoint.root)} of size ${checkpoint.size}`,
      );
    }
  }
  const current =
    online && checkpoint && key
      ? await checkOnline(online.fetch, block.url, key, { checkpoint, note: block.checkpoint })
      : undefined;
  const anchored = block.anchored
    ? await checkAnchoredCheckpoint(
        receipt,
        block.anchored,
        key,
        checkpoint,
        online ? { fetch: online.fetch, consistent: servedConsistency } : undefined,
      )
    : undefined;
  const anchoredFailed = anchored?.status === 'failed' || anchored?.online?.status === 'fork';
  return {
    status: problems.length === 0 && current?.status !== 'fork' && !anchoredFailed ? 'passed' : 'failed',
    origin: block.origin,
    url: block.url,
    leafIndex: block.leafIndex,
    treeSize: checkpoint?.size ?? null,
    keyChecked,
    ...(cosigned ? { witnesses: cosigned.report } : {}),
    problems,
    ...(current ? { online: current } : {}),
    ...(anchored ? { anchored } : {}),
  };
}

/**
 * The cosignatures of `note` against the witness keys given: a known witness's cosignature that fails to verify,
 * or fewer than the quorum, is the problem returned.
 */
async function checkCosignatures(
  note: string,
  witnesses: { keys: readonly string[]; quorum?: number },
): Promise<{ report: { cosignedBy: string[]; quorum: number }; problem?: string }> {
  const quorum = witnesses.quorum ?? witnesses.keys.length;
  try {
    const verified = await verifyCosignatures(note, witnesses.keys.map(parseCosignerKey));
    const report = { cosignedBy: verified.map((v) => v.name), quorum };
    if (verified.length >= quorum) return { report };
    return {
      report,
      problem: `witnesses: ${verified.length} of the witnesses given cosigned the checkpoint, ${quorum} required`,
    };
  } catch (e) {
    return { report: { cosignedBy: [], quorum }, problem: `witnesses: ${errorMessage(e)}` };
  }
}

/** How long one request to the log may take, in milliseconds. */
const LOG_TIMEOUT_MS = 15_000;

/** The most a checkpoint or tile can take (a full tile is 8 KiB; a note with many cosignatures a few). */
const LOG_MAX_BYTES = 64 * 1024;

/** A resource of the log, bounded in time and size: anyone can write a log URL into a receipt. */
async function fetchLog(f: typeof fetch, url: string): Promise<Uint8Array> {
  const res = await f(url, { signal: AbortSignal.timeout(LOG_TIMEOUT_MS) });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`${url}: HTTP ${res.status}`);
  }
  return readBounded(res, LOG_MAX_BYTES);
}

/**
 * Compares the receipt's verified checkpoint with the one `url` serves now (see `OnlineLogReport`): reads
 * `<url>/checkpoint`, verifies it with the same key, then fetches only the tiles the consistency proof between
 * the two sizes reads (C2SP tlog-tiles, at the widths the newer tree has) and checks the proof. Never throws.
 */
export async function checkOnline(
  f: typeof fetch,
  url: string,
  key: VerifierKey,
  receipt: { checkpoint: Checkpoint; note: string },
): Promise<OnlineLogReport> {
  const base = url.replace(/\/+$/, '');
  const old = receipt.checkpoint;
  const result = onlineReport(base, receipt.note);
  const unavailable = (e: unknown) =>
    msg('log.online.unavailable', { url: base, reason: foreign(errorMessage(e)) });
  let note: string;
  let now: Checkpoint;
  try {
    note = new TextDecoder().decode(await fetchLog(f, `${base}/checkpoint`));
    now = await verifyCheckpoint(note, key);
  } catch (e) {
    return result('unavailable', null, unavailable(e));
  }
  const sizes = { size: now.size, receiptSize: old.size, url: base };
  return judgeServed(result, { old, now, served: note }, () => servedConsistency(f, base, old, now), {
    rolledBack: msg('log.online.rolledBack', sizes),
    fork: msg('log.online.fork', sizes),
    consistent: msg('log.online.consistent', sizes),
    unavailable,
  });
}

/** Builds an `OnlineLogReport` for the log at `url` (`status`, the served size, the outcome as a message). */
export type OnlineReportOf = (
  status: OnlineLogReport['status'],
  servedSize: number | null,
  message: Message,
  served?: string,
) => OnlineLogReport;

/**
 * The builder of the reports of one online comparison against `url`: with a served signed note (a fork), the
 * receipt's (`receiptNote`) and the served one are kept as evidence.
 */
export function onlineReport(url: string, receiptNote: string): OnlineReportOf {
  return (status, servedSize, message, served) => ({
    status,
    url,
    servedSize,
    reason: render(message, 'en'),
    reasonMessage: message,
    ...(served !== undefined ? { evidence: { receipt: receiptNote, served } } : {}),
  });
}

/**
 * The verdict on a served checkpoint `now` (its signed note `served`, already verified) against the receipt's
 * `old`: a smaller tree is a fork (a rollback), else `consistent()` decides; its failure to answer (a tile that
 * cannot be read) is `unavailable`. Never throws.
 */
export async function judgeServed(
  result: OnlineReportOf,
  checkpoints: { old: Checkpoint; now: Checkpoint; served: string },
  consistent: () => Promise<boolean>,
  say: { rolledBack: Message; fork: Message; consistent: Message; unavailable: (e: unknown) => Message },
): Promise<OnlineLogReport> {
  const { old, now, served } = checkpoints;
  if (now.size < old.size) return result('fork', now.size, say.rolledBack, served);
  let holds: boolean;
  try {
    holds = await consistent();
  } catch (e) {
    return result('unavailable', now.size, say.unavailable(e));
  }
  return holds ? result('consistent', now.size, say.consistent) : result('fork', now.size, say.fork, served);
}

/**
 * Whether the log at `base` proves that `newer` extends `older` (RFC 9162, 2.1.4; `older.size <= newer.size`):
 * fetches only the tiles the consistency proof between the two sizes reads (C2SP tlog-tiles, at the widths the
 * newer tree has), builds the proof from them and checks it against both signed roots, so nothing the log serves
 * is trusted but what its key signed. Two checkpoints of one size are consistent when their roots are equal.
 * @throws Error when a tile cannot be read or has the wrong length.
 */
export async function servedConsistency(
  f: typeof fetch,
  base: string,
  older: Checkpoint,
  newer: Checkpoint,
): Promise<boolean> {
  if (newer.size === older.size) return equalBytes(newer.root, older.root);
  if (newer.size < older.size) return false;
  const tiles = new Map<string, Uint8Array>();
  for (const { level, idx } of tilesRead((read) => consistencyProof(older.size, newer.size, read))) {
    const width = tileWidth(level, idx, newer.size);
    const bytes = await fetchLog(
      f,
      `${base}/${tilePath({ level, index: idx, ...(width < TILE_WIDTH ? { width } : {}) })}`,
    );
    if (bytes.length !== width * HASH_SIZE) throw new Error(`tile ${level}/${idx}: ${bytes.length} bytes`);
    tiles.set(`${level}/${idx}`, bytes);
  }
  const proof = consistencyProof(
    older.size,
    newer.size,
    tileReader((level, index) => tiles.get(`${level}/${index}`) ?? new Uint8Array(0)),
  );
  return verifyConsistency(older.size, newer.size, proof, older.root, newer.root);
}

/** The report's lines for the log (English, as the notarial act's). */
export function logLines(log: LogReport): string[] {
  const lines = [
    `Transparency log ${log.origin}: leaf ${log.leafIndex}${log.treeSize === null ? '' : ` of ${log.treeSize}`}, ${log.status === 'passed' ? 'inclusion proven' : 'FAILED'}`,
  ];
  if (log.status === 'passed') {
    lines.push(
      log.keyChecked
        ? '  checkpoint signed by the log key given (--log-key)'
        : '  checkpoint signed by the key the receipt names only: give --log-key to check it against the log',
    );
    if (log.witnesses) {
      lines.push(
        `  cosigned by ${log.witnesses.cosignedBy.length} of the witnesses given (quorum ${log.witnesses.quorum}): ${log.witnesses.cosignedBy.join(', ')}`,
      );
    }
  }
  for (const p of log.problems) lines.push(`  ${p}`);
  if (log.online) {
    lines.push(`  ${log.online.reason}`);
    const evidence = log.online.evidence;
    if (evidence) {
      lines.push(
        "  the receipt's checkpoint:",
        ...indentNote(evidence.receipt),
        '  the checkpoint served:',
        ...indentNote(evidence.served),
      );
    }
  }
  if (log.anchored) lines.push(...anchoredLines(log.anchored));
  return lines;
}

/** A signed note's lines, indented under the line that names it (the text reports' evidence). */
export function indentNote(note: string): string[] {
  return note
    .trimEnd()
    .split('\n')
    .map((l) => `    ${l}`);
}
