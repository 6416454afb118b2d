/**
 * Which signature of the certificate PDF check 6 judges, and what its `/ByteRange` covers (ISO 32000-1
 * 12.8.1, the signature dictionary's `/ByteRange [0 a b c]`: the whole revision but the `/Contents` string,
 * as a PAdES signature of ETSI EN 319 142-1 must), and that the revisions after it change nothing it signed.
 */
import { startsWith } from '../certificate.ts';
import { errorMessage } from '../error-message.ts';
import { data, foreign, msg } from '../messages/index.ts';
import { changesAfter, type PdfSignature, type PdfSignatures } from '../pdf-signatures.ts';
import { type CheckBuilder, type CheckResult, notRun } from '../report.ts';

/**
 * The certificate's own signatures (`signatures`, oldest first: the service's, then the tabelião's when they
 * signed too): the `/Type /Sig` after the notarized `original`'s bytes (`mine`: every signature and document
 * timestamp after them). Signatures of the original are noted, not judged. `result` instead when there is
 * none: not run (unsigned) or failed (document timestamps only).
 */
export function selectSignature(
  c: CheckBuilder,
  certificate: Uint8Array,
  read: PdfSignatures,
  original: Uint8Array | undefined,
): { signatures: PdfSignature[]; mine: PdfSignature[] } | { result: CheckResult } {
  const originalEnd = original && startsWith(certificate, original) ? original.length : 0;
  const inOriginal = read.signatures.filter((s) => s.coverage.end <= originalEnd);
  const mine = read.signatures.filter((s) => s.coverage.end > originalEnd);
  const signatures = mine.filter((s) => !s.documentTimestamp);
  if (signatures.length === 0) {
    if (mine.length === 0) return { result: notRun(6, 'not-applicable', msg('pades.notSigned')) };
    c.fail(msg('pades.signature'), msg('pades.onlyDocumentTimestamps'));
    return { result: c.result(data('')) };
  }
  if (inOriginal.length > 0) {
    c.note(
      msg('pades.original'),
      msg(inOriginal.length === 1 ? 'pades.originalSignature' : 'pades.originalSignatures', {
        count: inOriginal.length,
      }),
    );
  }
  return { signatures, mine };
}

/**
 * ISO 32000-1 12.8.1: `ours`'s `/ByteRange [0 a b c]` is well formed and covers its whole revision but the
 * `/Contents` string; the file ends where a revision ends (no bytes added after the last `%%EOF`); the
 * revisions after it only add validation data and document timestamps (ETSI EN 319 142-1 5.4). Returns
 * whether the signature's coverage holds (false: `c` failed, nothing more to judge).
 */
export async function checkByteRange(
  c: CheckBuilder,
  certificate: Uint8Array,
  read: PdfSignatures,
  ours: PdfSignature,
): Promise<boolean> {
  const [, a, b, c3] = ours.byteRange;
  if (!ours.coverage.wellFormed || !ours.coverage.endsARevision) {
    c.fail(
      data('ByteRange'),
      msg('pades.rangeProblem', {
        range: `[0 ${a} ${b} ${c3}]`,
        problem: ours.coverage.problemMessage ?? msg('pades.notARevisionEnd'),
      }),
    );
    return false;
  }
  const lastRevisionEnd = read.revisions.at(-1) ?? 0;
  if (lastRevisionEnd !== certificate.length) {
    c.fail(
      data('ByteRange'),
      msg('pades.bytesAdded', { size: certificate.length, after: certificate.length - lastRevisionEnd }),
    );
    return false;
  }
  const range = `[0 ${a} ${b} ${c3}]`;
  c.expect(
    true,
    data('ByteRange'),
    ours.coverage.wholeFile
      ? msg('pades.rangeWholeFile', { range })
      : msg('pades.rangeRevision', { range, after: ours.coverage.bytesAfter }),
  );
  return ours.coverage.wholeFile || checkLaterRevisions(c, certificate, ours);
}

/**
 * The incremental updates after `ours` (ISO 32000-1 7.5.6) add objects (validation data, document
 * timestamps) and update only what those need: nothing `ours` signed changes. Returns whether they do not.
 */
async function checkLaterRevisions(
  c: CheckBuilder,
  certificate: Uint8Array,
  ours: PdfSignature,
): Promise<boolean> {
  let changes: Awaited<ReturnType<typeof changesAfter>>;
  try {
    changes = await changesAfter(certificate, ours.coverage.end);
  } catch (e) {
    c.fail(msg('pades.laterRevisions'), foreign(errorMessage(e)));
    return false;
  }
  const adds = msg('pades.laterAdd', { objects: changes.added });
  c.expect(
    changes.refused.length === 0,
    msg('pades.laterRevisions'),
    changes.refused.length === 0
      ? changes.allowed.length > 0
        ? msg('pades.laterAddUpdate', { add: adds, updated: changes.allowed.join(', ') })
        : adds
      : msg('pades.laterChange', { changed: changes.refused.slice(0, 10).join(', ') }),
  );
  return changes.refused.length === 0;
}
