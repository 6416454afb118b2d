import { fromBase64, toHex } from '@notary/trust/bytes';
import { parseCosignerKey, verifyCosignatures } from '@notary/trust/cosignature';
import { type Checkpoint, parseVerifierKey, verifyCheckpoint } from '@notary/trust/signed-note';
import { leafHash, verifyInclusion } from '@notary/trust/tlog';
import { decodeLeaf } from '@notary/trust/tlog-leaf';
import { errorMessage } from './error-message.ts';
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
}

/**
 * Checks `receipt.transparencyLog` (see `LogReport`); undefined when the receipt has none.
 * @param logKeys verifier keys (`<name>+<hex id>+<base64 key>`) the user trusts for the log; empty: none given.
 * @param witnesses witness verifier keys (type 0x04) the user trusts (`--witness`) and how many of them must have
 *   cosigned the checkpoint (`--witness-quorum`, default all); no keys: cosignatures are not checked.
 */
export async function checkLogProof(
  receipt: Receipt,
  logKeys: readonly string[],
  witnesses: { keys: readonly string[]; quorum?: number } = { keys: [] },
): Promise<LogReport | undefined> {
  const block = receipt.transparencyLog;
  if (!block) return undefined;
  const problems: string[] = [];
  const keyChecked = logKeys.length > 0;
  let checkpoint: Checkpoint | undefined;
  try {
    const keys = (keyChecked ? logKeys : [block.verifierKey]).map(parseVerifierKey);
    const key = keys.find((k) => k.name === block.origin);
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
  return {
    status: problems.length === 0 ? 'passed' : 'failed',
    origin: block.origin,
    url: block.url,
    leafIndex: block.leafIndex,
    treeSize: checkpoint?.size ?? null,
    keyChecked,
    ...(cosigned ? { witnesses: cosigned.report } : {}),
    problems,
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
  return lines;
}
