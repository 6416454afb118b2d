/**
 * Check 5, the time signature of the domain form (WACZ Signing and Verification 0.1.0, section 6, steps 6 and
 * 7): `timeSignature` is an RFC 3161 answer (granted) whose token stamps the SHA-256 of the ASCII of
 * `signature`, signed by the first certificate of `timestampCert`, reaching `--tsa-ca`; `created` is within
 * 10 minutes of its genTime.
 */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { digest, equalBytes, fromBase64, pemCertificates, toArrayBuffer } from '../bytes.ts';
import { subjectName } from '../cms.ts';
import { errorMessage } from '../error-message.ts';
import type { CheckBuilder } from '../report.ts';
import { verifyTimestampToken } from '../timestamp.ts';
import type { RecordedSignature } from './capture.ts';
import { builder, finish, notRunWacz } from './check.ts';
import type { DomainSigned } from './signature.ts';
import type { WaczCheckResult } from './types.ts';

/** The spec's bound between `created` and the time signature (section 6, step 7). */
const CREATED_WINDOW_MS = 10 * 60 * 1000;

/**
 * Check 5 for `data` (domain form); without a time signature, not run, saying why from what the capture
 * record (`recorded`) says. Returns the result and the genTime of a time signature that verified (null else).
 */
export async function checkTime(
  data: DomainSigned,
  recorded: RecordedSignature | undefined,
  tsaCa: Uint8Array[] | undefined,
): Promise<{ result: WaczCheckResult; verifiedAt: Date | null }> {
  const created = data.created;
  if (!data.timeSignature) {
    const why =
      recorded?.timeSignature?.status === 'unavailable'
        ? `the TSA was unavailable at capture time (${recorded.timeSignature.at ?? '?'}: ${recorded.timeSignature.reason ?? '?'}), as capture.json says`
        : 'none was made (no TSA configured)';
    const sentence = `the archive is signed without time signature: ${why}; its signing time rests on created (${created}) alone`;
    return { result: notRunWacz(5, 'not-applicable', sentence), verifiedAt: null };
  }
  const c = builder();
  const genTime = await checkTimeSignature(c, data, tsaCa);
  const createdAt = created ? new Date(created) : null;
  if (genTime && createdAt) {
    const delta = genTime.getTime() - createdAt.getTime();
    c.expect(
      !Number.isNaN(delta) && Math.abs(delta) <= CREATED_WINDOW_MS,
      'created within 10 minutes of genTime',
      `created ${created}, genTime ${genTime.toISOString()} (${Math.round(delta / 1000)} s)`,
    );
  }
  const result = finish(
    5,
    c,
    `the signature existed at ${genTime?.toISOString() ?? '?'} (RFC 3161), created ${created}`,
  );
  const ok = result.status === 'passed' || result.status === 'partial';
  return { result, verifiedAt: ok ? genTime : null };
}

/**
 * Check 5's core: `timeSignature` is a granted RFC 3161 `TimeStampResp` (or a bare token) whose token stamps
 * the SHA-256 of the ASCII of `signature`, signed by the first certificate of `timestampCert`. Returns genTime.
 */
async function checkTimeSignature(
  c: CheckBuilder,
  data: DomainSigned,
  tsaCa: Uint8Array[] | undefined,
): Promise<Date | null> {
  let token: Uint8Array;
  try {
    token = timeStampToken(c, fromBase64(data.timeSignature ?? ''));
  } catch (e) {
    c.fail('timeSignature', `does not parse: ${errorMessage(e)}`);
    return null;
  }
  let extra: pkijs.Certificate[] = [];
  try {
    extra = data.timestampCert
      ? pemCertificates(data.timestampCert).map((d) => pkijs.Certificate.fromBER(toArrayBuffer(d)))
      : [];
  } catch (e) {
    c.fail('timestampCert', errorMessage(e));
  }
  const imprint = await digest(new TextEncoder().encode(data.signature));
  const stamped = await verifyTimestampToken(c, token, imprint, 'SHA-256 of signature', tsaCa, true, extra);
  const first = extra[0];
  if (stamped?.tsa && first) {
    const same = equalBytes(
      new Uint8Array(first.toSchema().toBER(false)),
      new Uint8Array(stamped.tsa.toSchema().toBER(false)),
    );
    c.expect(
      same,
      'first certificate of timestampCert',
      same ? 'the TSA that signed' : `${subjectName(first)}, not the TSA that signed`,
    );
  } else if (!first) {
    c.fail('timestampCert', 'absent');
  }
  return stamped?.genTime ?? null;
}

/**
 * The RFC 3161 token of `der`: a `TimeStampResp` (status, token; RFC 3161 section 2.4.2), as authsign and this
 * service write it, whose status is noted in `c`; else `der` itself, taken as a bare token.
 * @throws Error when `der` is not DER, or the answer carries no token.
 */
function timeStampToken(c: CheckBuilder, der: Uint8Array): Uint8Array {
  const asn = asn1js.fromBER(toArrayBuffer(der));
  if (asn.offset === -1) throw new Error('not DER');
  const first = asn.result instanceof asn1js.Sequence ? asn.result.valueBlock.value[0] : undefined;
  if (!(first instanceof asn1js.Sequence)) return der;
  const resp = new pkijs.TimeStampResp({ schema: asn.result });
  const status = resp.status.status;
  c.expect(
    status === 0 || status === 1,
    'TSA status',
    status === 0 || status === 1 ? 'granted' : `not granted (${status})`,
  );
  if (!resp.timeStampToken) throw new Error('no token in the answer');
  return new Uint8Array(resp.timeStampToken.toSchema().toBER(false));
}
