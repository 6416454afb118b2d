/**
 * The PAdES baseline level a signature reaches (ETSI EN 319 142-1 clause 6, levels B-B to B-LTA), and why
 * not the next one.
 */
import type { pkijs } from '@notary/trust/asn1';
import type { ValidationMaterial } from '@notary/trust/revocation';
import { errorMessage } from '../error-message.ts';
import { commaList, data, type Message, msg } from '../messages/index.ts';
import type { PdfSignature } from '../pdf-signatures.ts';
import { readDss } from '../pdf-signatures.ts';
import type { CheckBuilder, PadesLevel } from '../report.ts';
import type { Judge } from './judge.ts';

/** The level after `level` (B-B after none). */
function nextLevel(level: PadesLevel | null): string {
  return level === null ? 'B-B' : level === 'B-B' ? 'B-T' : level === 'B-T' ? 'B-LT' : 'B-LTA';
}

/** What the level is judged from: check 6's findings so far. */
export interface LevelInput {
  /** Check 6 failed (a certificate, timestamp or later revision does not hold). */
  failed: boolean;
  /** The signature itself verified (ByteRange, CMS). */
  signatureOk: boolean;
  subFilter: string | null;
  /** A valid signature timestamp (B-T). */
  timestampValid: boolean;
  signerPath: pkijs.Certificate[];
  tsaPath: pkijs.Certificate[] | null;
  judge: Judge;
  /** The /DSS of the file as it ends. */
  material: ValidationMaterial;
  /** The valid document timestamps after the signature. */
  validDts: { sig: PdfSignature; genTime: Date }[];
  /** The certificate PDF. */
  certificate: Uint8Array;
  /** T and the proofs of existence before it. */
  times: Date[];
}

/**
 * ETSI EN 319 142-1 level reached, and why not the next one: B-B a PAdES SubFilter
 * (`ETSI.CAdES.detached`, `PBAD.PAdES`); B-T with a valid signature timestamp; B-LT with revocation data in
 * the /DSS (5.4.2) for every certificate of the signer's and the signature timestamp's paths; B-LTA with a
 * valid document timestamp (5.4.3) over a revision whose /DSS already had it.
 */
async function padesLevel(x: LevelInput): Promise<{ level: PadesLevel | null; notHigher: Message[] }> {
  if (x.failed) {
    return {
      level: null,
      notHigher: [msg(x.signatureOk ? 'pades.somethingDoesNotHold' : 'pades.signatureDoesNotVerify')],
    };
  }
  if (x.subFilter !== 'ETSI.CAdES.detached' && x.subFilter !== 'PBAD.PAdES') {
    return {
      level: null,
      notHigher: [msg('pades.notBaseline', { subFilter: x.subFilter ?? msg('word.none') })],
    };
  }
  if (!x.timestampValid || !x.tsaPath) {
    return { level: 'B-B', notHigher: [msg('pades.noSignatureTimestamp')] };
  }
  const paths = [x.signerPath, x.tsaPath];
  const missing = await x.judge.missingRevocation(paths, x.material, x.times);
  if (missing.length > 0) {
    return { level: 'B-T', notHigher: missing.map((m) => msg('pades.noRevocationData', { certificate: m })) };
  }
  if (x.validDts.length === 0) return { level: 'B-LT', notHigher: [msg('pades.noDocumentTimestamp')] };
  const reasons: Message[] = [];
  for (const dt of x.validDts) {
    let dss: Awaited<ReturnType<typeof readDss>>;
    try {
      dss = await readDss(x.certificate.subarray(0, dt.sig.coverage.end));
    } catch (e) {
      reasons.push(msg('pades.dssUnreadable', { ref: dt.sig.ref, error: errorMessage(e) }));
      continue;
    }
    const before = dss ? { certs: dss.certs, ocsps: dss.ocsps, crls: dss.crls } : null;
    const lacking = before ? await x.judge.missingRevocation(paths, before, x.times) : null;
    if (lacking?.length === 0) return { level: 'B-LTA', notHigher: [] };
    reasons.push(
      msg('pades.dtNoRevocationData', {
        ref: dt.sig.ref,
        certificates: lacking ? commaList(lacking) : msg('pades.everyCertificate'),
      }),
    );
  }
  return { level: 'B-LT', notHigher: reasons };
}

/**
 * ETSI EN 319 142-1 clause 6: the level `padesLevel` finds, noted in `c` with why not the next one. Returns it.
 */
export async function checkLevel(
  c: CheckBuilder,
  x: LevelInput,
): Promise<{ level: PadesLevel | null; notHigher: Message[] }> {
  const level = await padesLevel(x);
  c.note(msg('pades.level'), level.level ? data(level.level) : msg('word.none'));
  for (const why of level.notHigher) c.note(msg('pades.notLevel', { level: nextLevel(level.level) }), why);
  return level;
}
