/**
 * Verification of a signed web archive (`notary-verify <capture.wacz>`): Webrecorder's "WACZ Signing and
 * Verification" 0.1.0 (https://specs.webrecorder.net/wacz-auth/0.1.0/, section 6; webrecorder/specs
 * `wacz-auth/0.1.0/index.html` at commit 09268ee26718fe2da4e76fe43dbc23e0b2f13365) over a WACZ 1.1.1
 * (`wacz/1.1.1/index.md`), each WARC record against its CDXJ line (the spec's "partially loaded WACZ" check;
 * `cdxj/0.1.0`), and the capture's own record. Browser-safe: fflate, pkijs and WebCrypto only.
 *
 * Checks, in order (the statuses and reasons of `report.ts`):
 *   1 package hashes: every file `datapackage.json` lists has its SHA-256 and size; no other file is in the zip.
 *   2 datapackage digest: `datapackage-digest.json` holds the SHA-256 of `datapackage.json`, `signedData.hash` too.
 *   3 signature: `signedData` is one of the spec's two forms (no other property) and `signature` verifies over
 *     the ASCII of `hash` with `publicKey` (anonymous) or the first certificate of `domainCert` (domain).
 *     ECDSA signatures are read as DER `Ecdsa-Sig-Value` (authsign) or raw `r || s` (WebCrypto); RSA as
 *     PKCS#1 v1.5; SHA-256.
 *   4 signer identity (domain form): `domain` is the certificate's subject (common name or a DNS name), the
 *     chain is linked, `created` is within the certificate's validity, the chain reaches `--trust-ca`.
 *   5 time signature (domain form): `timeSignature` is an RFC 3161 answer (granted) whose token stamps the
 *     SHA-256 of the ASCII of `signature`, signed by the first certificate of `timestampCert`, reaching
 *     `--tsa-ca`; `created` is within 10 minutes of its genTime.
 *   6 WARC records: each CDXJ line's record (offset, length) has its `recordDigest`, parses as one WARC record
 *     of the line's URL whose block and payload digests hold (`WARC-Block-Digest`, `WARC-Payload-Digest`, the
 *     line's `digest`); the records between indexed ones (warcinfo, requests) have their block digests; the
 *     records cover the WARC file exactly.
 *   7 capture record: `capture/capture.json` is a capture of this service, its final URL is in the index, and
 *     what it says of the signature is what `signedData` is.
 */
import * as asn1js from 'asn1js';
import { Gunzip, unzipSync } from 'fflate';
import * as pkijs from 'pkijs';
import { z } from 'zod';
import { digest, equalBytes, fromBase64, pemCertificates, sha256Hex, toArrayBuffer, toHex } from './bytes.ts';
import { chainsTo, subjectName } from './cms.ts';
import { checksAndVerdict } from './format.ts';
import {
  CheckBuilder,
  type CheckResult,
  EXIT_CODES,
  type ExitCode,
  isIncomplete,
  type NotRunReason,
  type VerifyOutcome,
} from './report.ts';
import { withBrasiliaTimes } from './time.ts';
import { verifyTimestampToken } from './timestamp.ts';

/** Largest WACZ read, bytes. */
export const MAX_WACZ_BYTES = 1024 * 1024 * 1024;
/** Largest JSON file of the package read (`datapackage.json`, its digest, `capture.json`), bytes. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** Largest WARC record (or run of records between indexed ones) decompressed, bytes. */
const MAX_RECORD_BYTES = 512 * 1024 * 1024;
/** Most index lines read. */
const MAX_INDEX_LINES = 1_000_000;
/** Most failing records listed one by one in the evidence. */
const MAX_LISTED = 20;
/** The spec's bound between `created` and the time signature (section 6, step 7). */
const CREATED_WINDOW_MS = 10 * 60 * 1000;

export type WaczCheckId = 1 | 2 | 3 | 4 | 5 | 6 | 7;

export const WACZ_CHECK_NAMES: Readonly<Record<WaczCheckId, string>> = {
  1: 'package hashes (datapackage.json)',
  2: 'datapackage digest',
  3: 'signature (signedData)',
  4: 'signer identity (domainCert)',
  5: 'time signature (RFC 3161)',
  6: 'WARC records against the index',
  7: 'capture record (capture.json)',
};

/** A check of the WACZ report: `CheckResult`'s shape, with the WACZ checks' ids and names. */
export interface WaczCheckResult extends Omit<CheckResult, 'id' | 'name' | 'pades'> {
  id: WaczCheckId;
  name: string;
}

/** What the capture's record says (capture.json), as printed. */
export interface CaptureFacts {
  requestedUrl: string;
  finalUrl: string;
  status: number | null;
  startedAt: string;
  finishedAt: string;
  serverIp: string | null;
  title: string;
  browser: string | null;
  /** The main document's TLS certificate as the capture recorded it; null for http or when unknown. */
  tls: {
    subject: string;
    issuer: string;
    validFrom: string;
    validTo: string;
    sha256Fingerprint: string;
  } | null;
}

export interface WaczReport {
  kind: 'wacz';
  /** `passed`, `failed` or `incomplete`, as for a receipt (`report.ts`). */
  outcome: VerifyOutcome;
  /** `notary-verify`'s exit status: 0 passed, 1 failed, 3 incomplete. */
  exitCode: ExitCode;
  ok: boolean;
  failedAt: WaczCheckId | null;
  archive: {
    sha256: string;
    bytes: number;
    /** The signature's form; null when the archive is not signed. */
    form: 'domain' | 'anonymous' | null;
    created: string | null;
    software: string | null;
    /** Domain form: `domain`; anonymous form: the SHA-256 of the public key (hex). */
    signer: string | null;
    /** genTime of a time signature that verified, ISO 8601. */
    timeSignature: string | null;
  };
  capture: CaptureFacts | null;
  checks: WaczCheckResult[];
}

export interface WaczVerifyInput {
  /** DER certificates the domain certificate must chain to (`--trust-ca`). */
  trustCa?: Uint8Array[];
  /** DER certificates the time signature's TSA must chain to (`--tsa-ca`). */
  tsaCa?: Uint8Array[];
}

/** The input is not a WACZ that can be checked (not a zip, no `datapackage.json`, past a bound): exit 2. */
export class WaczFormatError extends Error {
  override name = 'WaczFormatError';
}

const resourceSchema = z.object({ path: z.string(), hash: z.string(), bytes: z.number().int().min(0) });
const datapackageSchema = z.object({ resources: z.array(resourceSchema).max(100_000) });
const anonymousSchema = z.strictObject({
  hash: z.string(),
  created: z.string(),
  software: z.string(),
  version: z.string().optional(),
  signature: z.string(),
  publicKey: z.string(),
});
const domainSchema = z.strictObject({
  hash: z.string(),
  created: z.string(),
  software: z.string(),
  version: z.string().optional(),
  signature: z.string(),
  domain: z.string(),
  domainCert: z.string(),
  timeSignature: z.string().optional(),
  timestampCert: z.string().optional(),
  crossSignedCert: z.string().optional(),
});
type DomainSigned = z.infer<typeof domainSchema>;
const digestSchema = z.object({ path: z.string(), hash: z.string(), signedData: z.unknown().optional() });

/** The checks' builder with the WACZ check's id and name (`CheckBuilder` judges the status). */
function builder(): CheckBuilder {
  return new CheckBuilder(1);
}

function finish(id: WaczCheckId, c: CheckBuilder, summary: string): WaczCheckResult {
  const { id: _id, name: _name, pades: _pades, ...rest } = c.result(summary);
  return { id, name: WACZ_CHECK_NAMES[id], ...rest };
}

function notRunWacz(
  id: WaczCheckId,
  reason: NotRunReason,
  why: string,
  evidence: CheckResult['evidence'] = [],
) {
  return {
    id,
    name: WACZ_CHECK_NAMES[id],
    status: 'not-run',
    reason,
    summary: why,
    evidence,
  } as WaczCheckResult;
}

function json(bytes: Uint8Array | undefined, what: string): unknown {
  if (!bytes) throw new Error(`${what}: absent`);
  if (bytes.length > MAX_JSON_BYTES) throw new Error(`${what}: larger than ${MAX_JSON_BYTES} bytes`);
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw new Error(`${what}: not JSON (${(e as Error).message})`);
  }
}

/** Reads the zip: every entry by name; repeated names are reported, deflated entries inflated within bounds. */
function readZip(bytes: Uint8Array): { files: Map<string, Uint8Array>; repeated: string[] } {
  const seen = new Set<string>();
  const repeated: string[] = [];
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, {
      filter: (f) => {
        if (seen.has(f.name)) repeated.push(f.name);
        seen.add(f.name);
        if (f.compression !== 0 && f.compression !== 8)
          throw new Error(`${f.name}: compression ${f.compression}`);
        if (f.originalSize > MAX_WACZ_BYTES) throw new Error(`${f.name}: ${f.originalSize} bytes`);
        return true;
      },
    });
  } catch (e) {
    throw new WaczFormatError(`not a WACZ (a zip file): ${(e as Error).message}`);
  }
  return { files: new Map(Object.entries(entries).filter(([name]) => !name.endsWith('/'))), repeated };
}

/**
 * Verifies a WACZ's signature, package and records (see the module's note). Runs in Node and in browsers;
 * contacts nothing.
 * @throws WaczFormatError when `bytes` is not a zip, has no `datapackage.json`, or is past `MAX_WACZ_BYTES`.
 */
export async function verifyWacz(bytes: Uint8Array, input: WaczVerifyInput = {}): Promise<WaczReport> {
  if (bytes.length > MAX_WACZ_BYTES) throw new WaczFormatError(`larger than ${MAX_WACZ_BYTES} bytes`);
  const { files, repeated } = readZip(bytes);
  const datapackageBytes = files.get('datapackage.json');
  if (!datapackageBytes) throw new WaczFormatError('not a WACZ: no datapackage.json');
  const checks: WaczCheckResult[] = [];

  // 1. The package: every listed file's hash and size; nothing unlisted.
  const c1 = builder();
  let resources: z.infer<typeof resourceSchema>[] = [];
  try {
    resources = datapackageSchema.parse(json(datapackageBytes, 'datapackage.json')).resources;
  } catch (e) {
    c1.fail(
      'datapackage.json',
      e instanceof z.ZodError ? 'not a data package (no resources list)' : (e as Error).message,
    );
  }
  for (const name of repeated) c1.fail(name, 'is in the zip more than once');
  const listed = new Set<string>();
  for (const r of resources) {
    listed.add(r.path);
    const data = files.get(r.path);
    if (!data) {
      c1.fail(r.path, 'listed but not in the archive');
      continue;
    }
    const m = /^sha256:([0-9a-f]{64})$/i.exec(r.hash);
    if (!m) {
      c1.fail(r.path, `hash ${r.hash}: only sha256:<hex> is read`);
      continue;
    }
    const actual = await sha256Hex(data);
    c1.expect(
      actual === m[1]?.toLowerCase() && data.length === r.bytes,
      r.path,
      actual === m[1]?.toLowerCase() && data.length === r.bytes
        ? `sha256:${actual}, ${data.length} bytes`
        : `sha256:${actual}, ${data.length} bytes (listed ${r.hash}, ${r.bytes} bytes)`,
    );
  }
  for (const name of files.keys()) {
    if (name !== 'datapackage.json' && name !== 'datapackage-digest.json' && !listed.has(name)) {
      c1.fail(name, 'in the archive but not listed in datapackage.json (no hash covers it)');
    }
  }
  checks.push(
    finish(1, c1, `the ${resources.length} files listed in datapackage.json have their SHA-256 and size`),
  );

  // 2. The digest of datapackage.json.
  const c2 = builder();
  const datapackageHash = `sha256:${await sha256Hex(datapackageBytes)}`;
  let signed: unknown;
  const digestBytes = files.get('datapackage-digest.json');
  if (!digestBytes) {
    c2.fail('datapackage-digest.json', 'absent: the archive is not signed');
  } else {
    try {
      const d = digestSchema.parse(json(digestBytes, 'datapackage-digest.json'));
      c2.expect(d.path === 'datapackage.json', 'path', d.path);
      c2.expect(
        d.hash === datapackageHash,
        'hash',
        d.hash === datapackageHash ? d.hash : `${d.hash} (datapackage.json is ${datapackageHash})`,
      );
      signed = d.signedData;
      const signedHash = (signed as { hash?: unknown } | undefined)?.hash;
      if (signed === undefined) c2.fail('signedData', 'absent: the archive is not signed');
      else c2.expect(signedHash === d.hash, 'signedData.hash', String(signedHash));
    } catch (e) {
      c2.fail(
        'datapackage-digest.json',
        e instanceof z.ZodError ? 'not a digest (path, hash)' : (e as Error).message,
      );
    }
  }
  checks.push(
    finish(
      2,
      c2,
      `datapackage-digest.json and signedData hold the SHA-256 of datapackage.json (${datapackageHash})`,
    ),
  );

  // 3. The signature.
  const c3 = builder();
  const anonymous = anonymousSchema.safeParse(signed);
  const domain = anonymous.success ? undefined : domainSchema.safeParse(signed);
  let form: 'anonymous' | 'domain' | null = null;
  let signer: string | null = null;
  let domainCerts: pkijs.Certificate[] = [];
  if (signed === undefined) {
    c3.fail('signedData', 'absent');
  } else if (anonymous.success) {
    form = 'anonymous';
    const data = anonymous.data;
    try {
      const spki = fromBase64(data.publicKey);
      signer = await sha256Hex(spki);
      c3.note('form', 'anonymous (publicKey)');
      c3.note('public key SHA-256', signer);
      const ok = await verifyOver(data.hash, data.signature, spki);
      c3.expect(ok, 'signature over hash', ok ? 'valid (ECDSA, SHA-256)' : 'invalid');
    } catch (e) {
      c3.fail('publicKey', (e as Error).message);
    }
  } else if (domain?.success) {
    form = 'domain';
    const data = domain.data;
    signer = data.domain;
    c3.note('form', 'domain (domainCert)');
    try {
      domainCerts = pemCertificates(data.domainCert).map((der) =>
        pkijs.Certificate.fromBER(toArrayBuffer(der)),
      );
      const leaf = domainCerts[0] as pkijs.Certificate;
      c3.note('certificate', subjectName(leaf));
      const ok = await verifyOver(data.hash, data.signature, spkiOf(leaf));
      c3.expect(ok, 'signature over hash', ok ? 'valid with the first certificate of domainCert' : 'invalid');
    } catch (e) {
      c3.fail('domainCert', (e as Error).message);
    }
  } else {
    const keys = signed && typeof signed === 'object' ? Object.keys(signed).join(', ') : typeof signed;
    c3.fail(
      'signedData',
      `neither of the spec's forms (anonymous, domain) or a property outside them: ${keys}`,
    );
  }
  checks.push(finish(3, c3, `signedData is signed (${form ?? '?'} form) over its hash`));
  const created = anonymous.success ? anonymous.data.created : domain?.success ? domain.data.created : null;
  const createdAt = created ? new Date(created) : null;

  // 7's facts first: checks 4 and 5 quote what the record says of the time signature.
  const recordBytes = files.get('capture/capture.json') ?? files.get('capture.json');
  let record: Record<string, unknown> | null = null;
  let recordError: string | null = null;
  if (recordBytes) {
    try {
      const parsed = json(recordBytes, 'capture.json');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        record = parsed as Record<string, unknown>;
      else recordError = 'not an object';
    } catch (e) {
      recordError = (e as Error).message;
    }
  }
  const recordedSignature = record?.signature as
    | {
        form?: string;
        domain?: string;
        certificateSha256?: string;
        publicKeySha256?: string;
        timeSignature?: { status?: string; reason?: string; at?: string; tsa?: string };
      }
    | undefined;

  // 4. The signer's identity (domain form).
  let genTime: Date | null = null;
  let timeSignatureOk = false;
  if (form === 'anonymous') {
    checks.push(
      notRunWacz(
        4,
        'not-applicable',
        `anonymous signature: the key is known only by its fingerprint (public key SHA-256 ${signer}); compare it with the one the service's certificate of this capture gives`,
        [{ label: 'public key SHA-256', value: signer ?? '' }],
      ),
    );
    checks.push(notRunWacz(5, 'not-applicable', 'the anonymous form has no time signature'));
  } else if (form === 'domain' && domain?.success) {
    const data = domain.data;
    // 5 first: its genTime is the time the chain of 4 is judged at.
    const c5 = builder();
    if (!data.timeSignature) {
      const why =
        recordedSignature?.timeSignature?.status === 'unavailable'
          ? `the TSA was unavailable at capture time (${recordedSignature.timeSignature.at ?? '?'}: ${recordedSignature.timeSignature.reason ?? '?'}), as capture.json says`
          : 'none was made (no TSA configured)';
      checks.push(
        notRunWacz(
          5,
          'not-applicable',
          `the archive is signed without time signature: ${why}; its signing time rests on created (${created}) alone`,
        ),
      );
    } else {
      genTime = await checkTimeSignature(c5, data, input.tsaCa);
      if (genTime && createdAt) {
        const delta = genTime.getTime() - createdAt.getTime();
        c5.expect(
          !Number.isNaN(delta) && Math.abs(delta) <= CREATED_WINDOW_MS,
          'created within 10 minutes of genTime',
          `created ${created}, genTime ${genTime.toISOString()} (${Math.round(delta / 1000)} s)`,
        );
      }
      const result = finish(
        5,
        c5,
        `the signature existed at ${genTime?.toISOString() ?? '?'} (RFC 3161), created ${created}`,
      );
      timeSignatureOk = result.status === 'passed' || result.status === 'partial';
      checks.push(result);
    }
    const c4 = builder();
    const leaf = domainCerts[0];
    if (!leaf) {
      c4.fail('domainCert', 'no certificate');
    } else {
      const names = certificateNames(leaf);
      c4.expect(
        names.includes(data.domain),
        'domain',
        `${data.domain} (certificate: ${names.join(', ') || 'no name'})`,
      );
      for (let i = 0; i + 1 < domainCerts.length; i++) {
        const linked = await domainCerts[i]?.verify(domainCerts[i + 1]).catch(() => false);
        c4.expect(
          linked === true,
          `domainCert ${i + 1}`,
          linked
            ? `issued by the next (${subjectName(domainCerts[i + 1] as pkijs.Certificate)})`
            : 'not signed by the next certificate',
        );
      }
      const at = timeSignatureOk && genTime ? genTime : createdAt;
      if (!at || Number.isNaN(at.getTime())) {
        c4.fail('created', `not a date: ${created}`);
      } else {
        const within = leaf.notBefore.value <= at && at <= leaf.notAfter.value;
        c4.expect(
          within,
          'valid at signing',
          `${at.toISOString()} (valid ${leaf.notBefore.value.toISOString()} to ${leaf.notAfter.value.toISOString()})`,
        );
        if (input.trustCa && input.trustCa.length > 0) {
          const trusted = await chainsTo(leaf, domainCerts.slice(1), input.trustCa, at);
          c4.expect(
            trusted.ok,
            'chain to --trust-ca',
            trusted.ok ? `trusted at ${at.toISOString()}` : trusted.message,
          );
        } else {
          c4.skip('the domain certificate chain (no --trust-ca given)');
        }
      }
      c4.note('certificate SHA-256', toHex(await digest(new Uint8Array(leaf.toSchema().toBER(false)))));
      if (data.crossSignedCert) {
        try {
          const cross = pkijs.Certificate.fromBER(
            toArrayBuffer(pemCertificates(data.crossSignedCert)[0] as Uint8Array),
          );
          c4.expect(
            equalBytes(spkiOf(cross), spkiOf(leaf)),
            'crossSignedCert',
            `${subjectName(cross)}: same public key as domainCert`,
          );
        } catch (e) {
          c4.fail('crossSignedCert', (e as Error).message);
        }
      }
    }
    checks.push(finish(4, c4, `signed by ${data.domain}`));
  } else {
    checks.push(notRunWacz(4, 'not-applicable', 'no valid signedData to take the signer from'));
    checks.push(notRunWacz(5, 'not-applicable', 'no valid signedData to take the time signature from'));
  }

  // 6. WARC records against the index.
  const index = await checkRecords(files, resources);
  checks.push(index.result);

  // 7. The capture record.
  let capture: CaptureFacts | null = null;
  if (!recordBytes) {
    checks.push(
      notRunWacz(7, 'not-applicable', 'no capture/capture.json: not a web capture of this service'),
    );
  } else {
    const c7 = builder();
    if (!record) {
      c7.fail('capture.json', recordError ?? 'unreadable');
    } else {
      capture = captureFacts(record);
      c7.expect(record.format === 'notary-web-capture/1', 'format', String(record.format));
      c7.note('requested URL', capture.requestedUrl);
      c7.note('final URL', `${capture.finalUrl} (HTTP ${capture.status ?? '?'})`);
      c7.note('captured', `${capture.startedAt} to ${capture.finishedAt}`);
      if (capture.serverIp) c7.note('server address', capture.serverIp);
      if (capture.tls) {
        c7.note(
          'main document TLS certificate',
          `${capture.tls.subject}; issuer ${capture.tls.issuer}; valid ${capture.tls.validFrom} to ${capture.tls.validTo}; SHA-256 ${capture.tls.sha256Fingerprint}`,
        );
      }
      c7.expect(
        index.urls.has(capture.finalUrl),
        'final URL archived',
        index.urls.has(capture.finalUrl)
          ? 'a response record in the index'
          : 'no response record in the index',
      );
      if (!recordedSignature) {
        c7.skip('the record says nothing of the signature (made before archives were signed)');
      } else if (form) {
        c7.expect(
          recordedSignature.form === form,
          'signature form as recorded',
          `${recordedSignature.form} (signedData: ${form})`,
        );
        if (form === 'anonymous') {
          c7.expect(
            recordedSignature.publicKeySha256 === signer,
            'key as recorded',
            `${recordedSignature.publicKeySha256}`,
          );
        } else if (domain?.success) {
          const leaf = domainCerts[0];
          const fp = leaf ? toHex(await digest(new Uint8Array(leaf.toSchema().toBER(false)))) : '';
          c7.expect(
            recordedSignature.domain === domain.data.domain && recordedSignature.certificateSha256 === fp,
            'certificate as recorded',
            `${recordedSignature.domain}, SHA-256 ${recordedSignature.certificateSha256}`,
          );
          const has = domain.data.timeSignature !== undefined;
          const says = recordedSignature.timeSignature?.status;
          c7.expect(
            has === (says === 'included'),
            'time signature as recorded',
            `${says ?? 'not said'} (datapackage-digest.json ${has ? 'has one' : 'has none'})`,
          );
        }
      }
    }
    checks.push(
      finish(
        7,
        c7,
        capture ? `capture of ${capture.requestedUrl} at ${capture.startedAt}` : 'capture record',
      ),
    );
  }

  checks.sort((a, b) => a.id - b.id);
  const failed = checks.find((c) => c.status === 'failed');
  const outcome: VerifyOutcome = failed ? 'failed' : checks.some(isIncomplete) ? 'incomplete' : 'passed';
  return {
    kind: 'wacz',
    outcome,
    exitCode: EXIT_CODES[outcome],
    ok: failed === undefined,
    failedAt: failed?.id ?? null,
    archive: {
      sha256: await sha256Hex(bytes),
      bytes: bytes.length,
      form,
      created,
      software: anonymous.success ? anonymous.data.software : domain?.success ? domain.data.software : null,
      signer,
      timeSignature: timeSignatureOk && genTime ? genTime.toISOString() : null,
    },
    capture,
    checks,
  };
}

/** The SubjectPublicKeyInfo DER of a certificate. */
function spkiOf(cert: pkijs.Certificate): Uint8Array {
  return new Uint8Array(cert.subjectPublicKeyInfo.toSchema().toBER(false));
}

/** The common names and DNS names of a certificate's subject. */
function certificateNames(cert: pkijs.Certificate): string[] {
  const names = cert.subject.typesAndValues
    .filter((tv) => tv.type === '2.5.4.3')
    .map((tv) => String(tv.value.valueBlock.value));
  const san = cert.extensions?.find((x) => x.extnID === '2.5.29.17')?.parsedValue;
  const list =
    san instanceof pkijs.AltName ? san.altNames : san instanceof pkijs.GeneralNames ? san.names : [];
  for (const n of list) if (n.type === 2) names.push(String(n.value));
  return names;
}

const CURVES: Readonly<Record<string, { name: string; size: number }>> = {
  '1.2.840.10045.3.1.7': { name: 'P-256', size: 32 },
  '1.3.132.0.34': { name: 'P-384', size: 48 },
  '1.3.132.0.35': { name: 'P-521', size: 66 },
};

/**
 * Whether `signatureB64` verifies over the ASCII of `text` with the key `spki` (DER SubjectPublicKeyInfo):
 * ECDSA (P-256, P-384, P-521; DER or raw `r || s`) or RSA PKCS#1 v1.5, with SHA-256.
 * @throws Error when the key is of another kind or does not parse.
 */
async function verifyOver(text: string, signatureB64: string, spki: Uint8Array): Promise<boolean> {
  const info = pkijs.PublicKeyInfo.fromBER(toArrayBuffer(spki));
  const algorithm = info.algorithm.algorithmId;
  const data = new TextEncoder().encode(text);
  const signature = fromBase64(signatureB64);
  const subtle = globalThis.crypto.subtle;
  if (algorithm === '1.2.840.10045.2.1') {
    const params = info.algorithm.algorithmParams;
    const curve =
      params instanceof asn1js.ObjectIdentifier ? CURVES[params.valueBlock.toString()] : undefined;
    if (!curve) throw new Error('an EC key of a curve not read here (P-256, P-384, P-521 are)');
    const key = await subtle.importKey(
      'spki',
      toArrayBuffer(spki),
      { name: 'ECDSA', namedCurve: curve.name },
      false,
      ['verify'],
    );
    const raw = signature.length === 2 * curve.size ? signature : derToRaw(signature, curve.size);
    if (!raw) return false;
    return subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, toArrayBuffer(raw), toArrayBuffer(data));
  }
  if (algorithm === '1.2.840.113549.1.1.1') {
    const key = await subtle.importKey(
      'spki',
      toArrayBuffer(spki),
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    return subtle.verify('RSASSA-PKCS1-v1_5', key, toArrayBuffer(signature), toArrayBuffer(data));
  }
  throw new Error(`a key of algorithm ${algorithm}: only ECDSA and RSA are read`);
}

/** A DER `Ecdsa-Sig-Value` (RFC 3279) as the raw `r || s` WebCrypto checks; null when it is not one. */
function derToRaw(der: Uint8Array, size: number): Uint8Array | null {
  const asn = asn1js.fromBER(toArrayBuffer(der));
  if (asn.offset !== der.length || !(asn.result instanceof asn1js.Sequence)) return null;
  const [r, s] = asn.result.valueBlock.value;
  if (!(r instanceof asn1js.Integer) || !(s instanceof asn1js.Integer)) return null;
  const out = new Uint8Array(2 * size);
  for (const [i, n] of [r, s].entries()) {
    let bytes = new Uint8Array(n.valueBlock.valueHexView);
    while (bytes.length > size && bytes[0] === 0) bytes = bytes.subarray(1);
    if (bytes.length > size) return null;
    out.set(bytes, i * size + size - bytes.length);
  }
  return out;
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
    const der = fromBase64(data.timeSignature ?? '');
    const asn = asn1js.fromBER(toArrayBuffer(der));
    if (asn.offset === -1) throw new Error('not DER');
    const first = asn.result instanceof asn1js.Sequence ? asn.result.valueBlock.value[0] : undefined;
    if (first instanceof asn1js.Sequence) {
      // A TimeStampResp (status, token), as authsign and this service write it.
      const resp = new pkijs.TimeStampResp({ schema: asn.result });
      const status = resp.status.status;
      c.expect(
        status === 0 || status === 1,
        'TSA status',
        status === 0 || status === 1 ? 'granted' : `not granted (${status})`,
      );
      if (!resp.timeStampToken) throw new Error('no token in the answer');
      token = new Uint8Array(resp.timeStampToken.toSchema().toBER(false));
    } else {
      token = der;
    }
  } catch (e) {
    c.fail('timeSignature', `does not parse: ${(e as Error).message}`);
    return null;
  }
  let extra: pkijs.Certificate[] = [];
  try {
    extra = data.timestampCert
      ? pemCertificates(data.timestampCert).map((d) => pkijs.Certificate.fromBER(toArrayBuffer(d)))
      : [];
  } catch (e) {
    c.fail('timestampCert', (e as Error).message);
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

/** One WARC record parsed from its uncompressed bytes. */
interface WarcRecord {
  headers: Map<string, string>;
  block: Uint8Array;
}

const CRLFCRLF = [13, 10, 13, 10];

function indexOfCrlfCrlf(bytes: Uint8Array, from: number): number {
  for (let i = from; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

/** Splits uncompressed WARC bytes into records (WARC 1.1 section 4: version, fields, CRLF, block, CRLF CRLF). */
function parseWarc(bytes: Uint8Array): WarcRecord[] {
  const out: WarcRecord[] = [];
  const latin1 = new TextDecoder('latin1');
  let at = 0;
  while (at < bytes.length) {
    const end = indexOfCrlfCrlf(bytes, at);
    if (end < 0) throw new Error(`no WARC header end after byte ${at}`);
    const lines = latin1.decode(bytes.subarray(at, end)).split('\r\n');
    if (!/^WARC\/1\.[01]$/.test(lines[0] ?? '')) throw new Error(`not a WARC record at byte ${at}`);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = Number(headers.get('content-length'));
    if (!Number.isSafeInteger(length) || length < 0)
      throw new Error(`record at byte ${at}: no Content-Length`);
    const start = end + 4;
    if (start + length + 4 > bytes.length)
      throw new Error(`record at byte ${at}: shorter than its Content-Length`);
    const trailer = bytes.subarray(start + length, start + length + 4);
    if (!CRLFCRLF.every((b, i) => trailer[i] === b))
      throw new Error(`record at byte ${at}: no CRLF CRLF after its block`);
    out.push({ headers, block: bytes.subarray(start, start + length) });
    at = start + length + 4;
  }
  return out;
}

/** Gunzips every member of `gz` (bounded); `members` counts them. @throws Error past the bound or on bad data. */
function gunzipAll(gz: Uint8Array): { data: Uint8Array; members: number } {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let members = 1;
  const g = new Gunzip((chunk) => {
    size += chunk.length;
    if (size > MAX_RECORD_BYTES) throw new Error(`more than ${MAX_RECORD_BYTES} bytes once decompressed`);
    chunks.push(chunk);
  });
  g.onmember = () => {
    members++;
  };
  g.push(gz, true);
  const data = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    data.set(c, at);
    at += c.length;
  }
  return { data, members };
}

/** `sha256:<hex>` of `bytes` (WARC digests here are SHA-256 in hex, as warcio writes them). */
async function sha256Label(bytes: Uint8Array): Promise<string> {
  return `sha256:${await sha256Hex(bytes)}`;
}

/** The HTTP payload of a WARC `response`/`request` block (after the HTTP headers), else the block. */
function payloadOf(record: WarcRecord): Uint8Array {
  if (!/^application\/http/i.test(record.headers.get('content-type') ?? '')) return record.block;
  const end = indexOfCrlfCrlf(record.block, 0);
  return end < 0 ? new Uint8Array() : record.block.subarray(end + 4);
}

/** Checks a record's own digests (block, payload); returns the problems. */
async function recordDigests(record: WarcRecord): Promise<string[]> {
  const problems: string[] = [];
  const block = record.headers.get('warc-block-digest');
  if (block && /^sha256:/i.test(block) && block.toLowerCase() !== (await sha256Label(record.block))) {
    problems.push('WARC-Block-Digest does not match its block');
  }
  const payload = record.headers.get('warc-payload-digest');
  if (
    payload &&
    /^sha256:/i.test(payload) &&
    payload.toLowerCase() !== (await sha256Label(payloadOf(record)))
  ) {
    problems.push('WARC-Payload-Digest does not match its payload');
  }
  return problems;
}

const cdxSchema = z.object({
  url: z.string(),
  offset: z.union([z.string(), z.number()]),
  length: z.union([z.string(), z.number()]),
  filename: z.string().optional(),
  digest: z.string().optional(),
  recordDigest: z.string().optional(),
});

/**
 * Check 6: each index line's record against its `recordDigest` and digests, the records between them, and
 * the coverage of each WARC file. Returns the result and the URLs of indexed records.
 */
async function checkRecords(
  files: Map<string, Uint8Array>,
  resources: z.infer<typeof resourceSchema>[],
): Promise<{ result: WaczCheckResult; urls: Set<string> }> {
  const c = builder();
  const urls = new Set<string>();
  const listed = resources.map((r) => r.path);
  const warcs = listed.filter((p) => /^archive\/[^/]+\.warc(\.gz)?$/.test(p));
  const indexes = listed.filter((p) => /^indexes\/[^/]+\.(cdx|cdxj)(\.gz)?$/.test(p));
  if (warcs.length === 0 || indexes.length === 0) {
    return {
      result: notRunWacz(6, 'not-applicable', 'no WARC file or no CDXJ index listed in datapackage.json'),
      urls,
    };
  }
  const byFile = new Map<
    string,
    Array<{ url: string; offset: number; length: number; digest?: string; recordDigest?: string }>
  >();
  let lines = 0;
  for (const p of indexes) {
    const raw = files.get(p);
    if (!raw) continue;
    let text: string;
    try {
      text = new TextDecoder().decode(p.endsWith('.gz') ? gunzipAll(raw).data : raw);
    } catch (e) {
      c.fail(p, `does not decompress: ${(e as Error).message}`);
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      if (++lines > MAX_INDEX_LINES) {
        c.fail(p, `more than ${MAX_INDEX_LINES} lines`);
        break;
      }
      const brace = line.indexOf('{');
      const parsed = brace < 0 ? undefined : cdxSchema.safeParse(safeJson(line.slice(brace)));
      if (!parsed?.success) {
        c.fail(p, `not a CDXJ line: ${line.slice(0, 120)}`);
        continue;
      }
      const e = parsed.data;
      const warc =
        warcs.find((w) => w === `archive/${e.filename ?? ''}`) ?? (warcs.length === 1 ? warcs[0] : undefined);
      if (!warc) {
        c.fail(p, `line names a WARC not in the archive: ${e.filename}`);
        continue;
      }
      const list = byFile.get(warc) ?? [];
      list.push({
        url: e.url,
        offset: Number(e.offset),
        length: Number(e.length),
        ...(e.digest ? { digest: e.digest } : {}),
        ...(e.recordDigest ? { recordDigest: e.recordDigest } : {}),
      });
      byFile.set(warc, list);
    }
  }
  let indexed = 0;
  let others = 0;
  let listedProblems = 0;
  const problem = (label: string, value: string) => {
    if (listedProblems++ < MAX_LISTED) c.fail(label, value);
    else if (listedProblems === MAX_LISTED + 1) c.fail('more records', 'fail; only the first are listed');
  };
  for (const warc of warcs) {
    const bytes = files.get(warc);
    if (!bytes) continue;
    const gz = warc.endsWith('.gz');
    const entries = (byFile.get(warc) ?? []).sort((a, b) => a.offset - b.offset);
    let covered = 0;
    const gap = async (from: number, to: number) => {
      if (to <= from) return;
      try {
        const records = parseWarc(gz ? gunzipAll(bytes.subarray(from, to)).data : bytes.subarray(from, to));
        for (const r of records) {
          others++;
          const type = r.headers.get('warc-type');
          if (type === 'response' || type === 'revisit') {
            problem(
              `${warc} ${r.headers.get('warc-target-uri') ?? '?'}`,
              `a ${type} record outside the index (bytes ${from} to ${to})`,
            );
          }
          for (const p of await recordDigests(r))
            problem(`${warc} ${type} ${r.headers.get('warc-target-uri') ?? ''}`.trim(), p);
        }
      } catch (e) {
        problem(`${warc} bytes ${from} to ${to}`, `not WARC records: ${(e as Error).message}`);
      }
    };
    for (const e of entries) {
      const where = `${warc} @${e.offset}+${e.length} ${e.url}`;
      if (
        !Number.isSafeInteger(e.offset) ||
        !Number.isSafeInteger(e.length) ||
        e.offset < covered ||
        e.length <= 0 ||
        e.offset + e.length > bytes.length
      ) {
        problem(
          where,
          `offset and length outside the file or overlapping the previous record (file ${bytes.length} bytes)`,
        );
        continue;
      }
      await gap(covered, e.offset);
      covered = e.offset + e.length;
      indexed++;
      urls.add(e.url);
      const stored = bytes.subarray(e.offset, e.offset + e.length);
      if (e.recordDigest) {
        const actual = await sha256Label(stored);
        if (actual !== e.recordDigest.toLowerCase()) {
          problem(where, `recordDigest ${e.recordDigest}, the record's bytes are ${actual}`);
          continue;
        }
      }
      let record: WarcRecord;
      try {
        const unzipped = gz ? gunzipAll(stored) : { data: stored, members: 1 };
        const records = parseWarc(unzipped.data);
        if (records.length !== 1 || !records[0])
          throw new Error(`${records.length} records where the index has one`);
        record = records[0];
      } catch (err) {
        problem(where, `not one WARC record: ${(err as Error).message}`);
        continue;
      }
      if (record.headers.get('warc-target-uri') !== e.url) {
        problem(where, `the record is of ${record.headers.get('warc-target-uri') ?? 'no URL'}`);
      }
      for (const p of await recordDigests(record)) problem(where, p);
      if (e.digest && /^(sha256:)?[0-9a-f]{64}$/i.test(e.digest)) {
        const expected = e.digest.toLowerCase().replace(/^sha256:/, '');
        const actual = await sha256Hex(payloadOf(record));
        if (actual !== expected) problem(where, `index digest ${e.digest}, the payload is sha256:${actual}`);
      }
      if (!e.recordDigest) c.skip(`${where}: no recordDigest in the index`);
    }
    await gap(covered, bytes.length);
    c.note(
      warc,
      `${bytes.length} bytes: ${entries.length} indexed records and the records between them cover it`,
    );
  }
  return {
    result: finish(
      6,
      c,
      `${indexed} indexed records match their recordDigest, URL and digests; ${others} other records (warcinfo, requests) their block digests`,
    ),
    urls,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function captureFacts(r: Record<string, unknown>): CaptureFacts {
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  const tls = r.tls && typeof r.tls === 'object' ? (r.tls as Record<string, unknown>) : null;
  const browser = r.browser && typeof r.browser === 'object' ? (r.browser as Record<string, unknown>) : null;
  return {
    requestedUrl: s(r.requestedUrl),
    finalUrl: s(r.finalUrl),
    status: typeof r.status === 'number' ? r.status : null,
    startedAt: s(r.startedAt),
    finishedAt: s(r.finishedAt),
    serverIp: typeof r.serverIp === 'string' ? r.serverIp : null,
    title: s(r.title),
    browser: browser ? `${s(browser.name)} ${s(browser.version)}`.trim() : null,
    tls: tls
      ? {
          subject: s(tls.subject),
          issuer: s(tls.issuer),
          validFrom: s(tls.validFrom),
          validTo: s(tls.validTo),
          sha256Fingerprint: s(tls.sha256Fingerprint),
        }
      : null,
  };
}

/**
 * The WACZ report as text for a terminal: the archive and capture facts, one block per check (as
 * `formatReport` prints a receipt's), then the verdict with the exit status. Times in Brasília time and UTC.
 */
export function formatWaczReport(report: WaczReport, verbose = true): string {
  const a = report.archive;
  const lines = [`Web archive (WACZ), SHA-256 ${a.sha256}, ${a.bytes} bytes`];
  if (report.capture) {
    const k = report.capture;
    lines.push(
      `Capture of ${k.requestedUrl}, final URL ${k.finalUrl} (HTTP ${k.status ?? '?'}), ${k.startedAt} to ${k.finishedAt}`,
    );
    lines.push(
      `  server address ${k.serverIp ?? 'unknown'}; ${k.browser ?? 'browser unknown'}; title ${JSON.stringify(k.title)}`,
    );
    if (k.tls) {
      lines.push(
        `  main document TLS certificate: ${k.tls.subject}; issuer ${k.tls.issuer}; valid ${k.tls.validFrom} to ${k.tls.validTo}; SHA-256 ${k.tls.sha256Fingerprint}`,
      );
    }
  }
  if (a.form) {
    lines.push(
      `Signed (${a.form} form) by ${a.form === 'anonymous' ? `the key with SHA-256 ${a.signer}` : a.signer}, created ${a.created}` +
        (a.timeSignature ? `, time signature ${a.timeSignature}` : ', no verified time signature'),
    );
  }
  lines.push('');
  lines.push(
    ...checksAndVerdict(report, verbose, (tally) => {
      const open = report.checks.filter(isIncomplete).map((c) => c.id);
      return `INCOMPLETE: no check failed, but check${open.length === 1 ? '' : 's'} ${open.join(', ')} could not run in full (${tally}); exit status 3: give what the part not checked needs (--trust-ca, --tsa-ca)`;
    }),
  );
  return withBrasiliaTimes(`${lines.join('\n')}\n`, 'en');
}
