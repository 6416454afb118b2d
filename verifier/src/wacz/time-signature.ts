/**
 * Check 5, the time signature of the domain form (WACZ Signing and Verification 0.1.0, section 6, steps 6 and
 * 7): `timeSignature` is an RFC 3161 answer (granted) whose token stamps the SHA-256 of the ASCII of
 * `signature`, signed by the first certificate of `timestampCert`, reaching `--tsa-ca`; `created` is within
 * 10 minutes of its genTime.
 */
import { asn1js, pkijs } from '@notary/trust/asn1';
import { digest, equalBytes, fromBase64, pemCertificates, toArrayBuffer } from '@notary/trust/bytes';
import { subjectName } from '@notary/trust/cms';
import { errorMessage } from '../error-message.ts';
import { data as asIs, msg } from '../messages/index.ts';
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
        ? msg('wacz.tsaUnavailable', {
            at: recorded.timeSignature.at ?? '?',
            reason: recorded.timeSignature.reason ?? '?',
          })
        : msg('wacz.noTsaConfigured');
    const sentence = msg('wacz.noTimeSignature', { why, created: String(created) });
    return { result: notRunWacz(5, 'not-applicable', sentence), verifiedAt: null };
  }
  const c = builder();
  const genTime = await checkTimeSignature(c, data, tsaCa);
  const createdAt = created ? new Date(created) : null;
  if (genTime && createdAt) {
    const delta = genTime.getTime() - createdAt.getTime();
    c.expect(
      !Number.isNaN(delta) && Math.abs(delta) <= CREATED_WINDOW_MS,
      msg('wacz.createdWithin'),
      asIs(`created ${created}, genTime ${genTime.toISOString()} (${Math.round(delta / 1000)} s)`),
    );
  }
  const result = finish(
    5,
    c,
    msg('wacz.timeSummary', { at: genTime?.toISOString() ?? '?', created: String(created) }),
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
    c.fail(asIs('timeSignature'), msg('tst.doesNotParse', { error: errorMessage(e) }));
    return null;
  }
  let extra: pkijs.Certificate[] = [];
  try {
    extra = data.timestampCert
      ? pemCertificates(data.timestampCert).map((d) => pkijs.Certificate.fromBER(toArrayBuffer(d)))
      : [];
  } catch (e) {
    c.fail(asIs('timestampCert'), asIs(errorMessage(e)));
  }
  const imprint = await digest(new TextEncoder().encode(data.signature));
  const stamped = await verifyTimestampToken(
    c,
    token,
    imprint,
    msg('wacz.sha256OfSignature'),
    tsaCa,
    true,
    extra,
  );
  const first = extra[0];
  if (stamped?.tsa && first) {
    const same = equalBytes(
      new Uint8Array(first.toSchema().toBER(false)),
      new Uint8Array(stamped.tsa.toSchema().toBER(false)),
    );
    c.expect(
      same,
      msg('wacz.firstTimestampCert'),
      same ? msg('wacz.theTsaThatSigned') : msg('wacz.notTheTsaThatSigned', { name: subjectName(first) }),
    );
  } else if (!first) {
    c.fail(asIs('timestampCert'), msg('word.absent'));
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
    msg('pades.tsaStatus'),
    status === 0 || status === 1 ? msg('wacz.granted') : msg('wacz.notGranted', { status }),
  );
  if (!resp.timeStampToken) throw new Error('no token in the answer');
  return new Uint8Array(resp.timeStampToken.toSchema().toBER(false));
}
