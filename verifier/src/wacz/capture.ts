/**
 * Check 7, the capture record (`capture/capture.json`, format `notary-web-capture/1`): a capture of this
 * service, its final URL archived as a response record of the index, and what it says of the signature is
 * what `signedData` is.
 */
import { digest, toHex } from '../bytes.ts';
import { errorMessage } from '../error-message.ts';
import type { CheckBuilder } from '../report.ts';
import { builder, finish, notRunWacz } from './check.ts';
import type { SignedData } from './signature.ts';
import type { CaptureFacts, WaczCheckResult } from './types.ts';
import { json } from './zip.ts';

/** What the capture record says of the archive's signature (absent in records made before archives were signed). */
export interface RecordedSignature {
  form?: string;
  domain?: string;
  certificateSha256?: string;
  publicKeySha256?: string;
  timeSignature?: { status?: string; reason?: string; at?: string; tsa?: string };
}

/** The capture record as read: absent, unreadable (`error`), or an object. */
export interface CaptureRecord {
  present: boolean;
  record: Record<string, unknown> | null;
  error: string | null;
  signature: RecordedSignature | undefined;
}

/** Reads `capture/capture.json` (or `capture.json` at the zip's root); never throws. */
export function readCaptureRecord(files: Map<string, Uint8Array>): CaptureRecord {
  const bytes = files.get('capture/capture.json') ?? files.get('capture.json');
  let record: Record<string, unknown> | null = null;
  let error: string | null = null;
  if (bytes) {
    try {
      const parsed = json(bytes, 'capture.json');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        record = parsed as Record<string, unknown>;
      else error = 'not an object';
    } catch (e) {
      error = errorMessage(e);
    }
  }
  const signature = record?.signature as RecordedSignature | undefined;
  return { present: bytes !== undefined, record, error, signature };
}

/**
 * Check 7: the capture record against the archive: its format, its final URL among the index's `urls`, and
 * its account of the signature against `signed` (check 3's reading). Returns the result and the record's facts.
 */
export async function checkCapture(
  rec: CaptureRecord,
  signed: SignedData,
  urls: Set<string>,
): Promise<{ result: WaczCheckResult; capture: CaptureFacts | null }> {
  if (!rec.present) {
    return {
      result: notRunWacz(7, 'not-applicable', 'no capture/capture.json: not a web capture of this service'),
      capture: null,
    };
  }
  const c = builder();
  let capture: CaptureFacts | null = null;
  if (!rec.record) {
    c.fail('capture.json', rec.error ?? 'unreadable');
  } else {
    capture = captureFacts(rec.record);
    c.expect(rec.record.format === 'notary-web-capture/1', 'format', String(rec.record.format));
    noteFacts(c, capture);
    c.expect(
      urls.has(capture.finalUrl),
      'final URL archived',
      urls.has(capture.finalUrl) ? 'a response record in the index' : 'no response record in the index',
    );
    if (!rec.signature) {
      c.skip('the record says nothing of the signature (made before archives were signed)');
    } else if (signed.form) {
      await compareSignature(c, rec.signature, signed);
    }
  }
  const summary = capture ? `capture of ${capture.requestedUrl} at ${capture.startedAt}` : 'capture record';
  return { result: finish(7, c, summary), capture };
}

function noteFacts(c: CheckBuilder, capture: CaptureFacts): void {
  c.note('requested URL', capture.requestedUrl);
  c.note('final URL', `${capture.finalUrl} (HTTP ${capture.status ?? '?'})`);
  c.note('captured', `${capture.startedAt} to ${capture.finishedAt}`);
  if (capture.serverIp) c.note('server address', capture.serverIp);
  if (capture.tls) {
    c.note(
      'main document TLS certificate',
      `${capture.tls.subject}; issuer ${capture.tls.issuer}; valid ${capture.tls.validFrom} to ${capture.tls.validTo}; SHA-256 ${capture.tls.sha256Fingerprint}`,
    );
  }
}

/** What the record says of the signature (form, key or certificate, time signature) against `signedData`. */
async function compareSignature(
  c: CheckBuilder,
  recorded: RecordedSignature,
  signed: SignedData,
): Promise<void> {
  c.expect(
    recorded.form === signed.form,
    'signature form as recorded',
    `${recorded.form} (signedData: ${signed.form})`,
  );
  if (signed.form === 'anonymous') {
    c.expect(recorded.publicKeySha256 === signed.signer, 'key as recorded', `${recorded.publicKeySha256}`);
  } else if (signed.domain) {
    const leaf = signed.domainCerts[0];
    const fp = leaf ? toHex(await digest(new Uint8Array(leaf.toSchema().toBER(false)))) : '';
    c.expect(
      recorded.domain === signed.domain.domain && recorded.certificateSha256 === fp,
      'certificate as recorded',
      `${recorded.domain}, SHA-256 ${recorded.certificateSha256}`,
    );
    const has = signed.domain.timeSignature !== undefined;
    const says = recorded.timeSignature?.status;
    c.expect(
      has === (says === 'included'),
      'time signature as recorded',
      `${says ?? 'not said'} (datapackage-digest.json ${has ? 'has one' : 'has none'})`,
    );
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
