/**
 * The document timestamps after the signature (ETSI EN 319 142-1 5.4.3: `/Type /DocTimeStamp`,
 * `/SubFilter /ETSI.RFC3161`, an RFC 3161 token over the byte ranges of its revision), each a proof that what
 * it covers existed at its genTime.
 */
import type { pkijs } from '@notary/trust/asn1';
import { digest } from '@notary/trust/bytes';
import { data, msg } from '../messages/index.ts';
import { type PdfSignature, signedContent } from '../pdf-signatures.ts';
import { CheckBuilder } from '../report.ts';
import { verifyTimestampToken } from '../timestamp.ts';
import type { Judge } from './judge.ts';
import type { PadesCheckOptions } from './options.ts';

/** A document timestamp that verified, its TSA valid at T or at a later one's genTime. */
export interface ValidDocumentTimestamp {
  sig: PdfSignature;
  genTime: Date;
  path: pkijs.Certificate[];
}

/**
 * ETSI EN 319 142-1 5.4.3: each document timestamp of `mine` after `ours`, latest first (a later one proves
 * when an earlier one existed), is a valid RFC 3161 token (messageImprint the SHA-256 of its byte ranges) of a
 * TSA chaining to `--tsa-ca`; each one's evidence in `c`, prefixed with its reference. Returns how many there
 * are and the valid ones, latest first.
 */
export async function checkDocumentTimestamps(
  c: CheckBuilder,
  certificate: Uint8Array,
  mine: PdfSignature[],
  ours: PdfSignature,
  judge: Judge,
  options: PadesCheckOptions,
): Promise<{ count: number; valid: ValidDocumentTimestamp[] }> {
  const docTimestamps = mine.filter((s) => s.documentTimestamp && s.coverage.end > ours.coverage.end);
  const valid: ValidDocumentTimestamp[] = [];
  for (const dt of [...docTimestamps].reverse()) {
    const sub = await checkDocumentTimestamp(certificate, dt, judge, valid, options);
    c.merge(sub, (inner) => msg('pades.inDocumentTimestamp', { ref: dt.ref, inner }));
  }
  return { count: docTimestamps.length, valid };
}

/** One document timestamp `dt`, its TSA judged at T or at the genTime of a later valid one (of `valid`). */
async function checkDocumentTimestamp(
  certificate: Uint8Array,
  dt: PdfSignature,
  judge: Judge,
  valid: ValidDocumentTimestamp[],
  options: PadesCheckOptions,
): Promise<CheckBuilder> {
  const sub = new CheckBuilder(6);
  if (!dt.coverage.wellFormed || !dt.coverage.endsARevision) {
    sub.fail(data('ByteRange'), dt.coverage.problemMessage ?? msg('pades.notARevisionEnd'));
    return sub;
  }
  if (dt.subFilter !== 'ETSI.RFC3161') {
    sub.note(data('SubFilter'), msg('pades.notRfc3161', { subFilter: dt.subFilter ?? msg('word.none') }));
  }
  const stamped = await verifyTimestampToken(
    sub,
    dt.cms,
    await digest(signedContent(certificate, dt)),
    msg('pades.sha256OfRanges'),
    options.tsaCa,
    false,
    judge.certificates,
  );
  if (stamped?.tsa) {
    judge.addCertificates(stamped.certificates);
    const poes = valid.filter((v) => v.sig.coverage.end > dt.coverage.end).map((v) => v.genTime);
    const verdict = await judge.certificate(stamped.tsa, options.tsaCa, options.at, poes, '--tsa-ca');
    verdict.report(sub, 'tsa');
    if (!sub.failed && verdict.ok !== false) {
      valid.push({ sig: dt, genTime: stamped.genTime, path: verdict.path });
    }
  }
  return sub;
}
