/**
 * Check 7, the capture record (`capture/capture.json`, format `notary-web-capture/1`): a capture of this
 * service, its final URL archived as a response record of the index, and what it says of the signature is
 * what `signedData` is.
 */
import { digest, toHex } from '@notary/trust/bytes';
import { errorMessage } from '../error-message.ts';
import { data, foreign, type Message, msg } from '../messages/index.ts';
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
  error: Message | null;
  signature: RecordedSignature | undefined;
}

/** Reads `capture/capture.json` (or `capture.json` at the zip's root); never throws. */
export function readCaptureRecord(files: Map<string, Uint8Array>): CaptureRecord {
  const bytes = files.get('capture/capture.json') ?? files.get('capture.json');
  let record: Record<string, unknown> | null = null;
  let error: Message | null = null;
  if (bytes) {
    try {
      const parsed = json(bytes, 'capture.json');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        record = parsed as Record<string, unknown>;
      else error = msg('wacz.notAnObject');
    } catch (e) {
      error = foreign(errorMessage(e));
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
      result: notRunWacz(7, 'not-applicable', msg('wacz.noCaptureJson')),
      capture: null,
    };
  }
  const c = builder();
  let capture: CaptureFacts | null = null;
  if (!rec.record) {
    c.fail(data('capture.json'), rec.error ?? msg('wacz.unreadable'));
  } else {
    capture = captureFacts(rec.record);
    c.expect(rec.record.format === 'notary-web-capture/1', data('format'), data(String(rec.record.format)));
    noteFacts(c, capture);
    c.expect(
      urls.has(capture.finalUrl),
      msg('wacz.finalUrlArchived'),
      msg(urls.has(capture.finalUrl) ? 'wacz.responseInIndex' : 'wacz.noResponseInIndex'),
    );
    if (!rec.signature) {
      c.skip(msg('wacz.recordSaysNothing'));
    } else if (signed.form) {
      await compareSignature(c, rec.signature, signed);
    }
  }
  const summary = capture
    ? msg('wacz.captureSummary', { url: capture.requestedUrl, at: capture.startedAt })
    : msg('wacz.captureRecord');
  return { result: finish(7, c, summary), capture };
}

function noteFacts(c: CheckBuilder, capture: CaptureFacts): void {
  c.note(msg('wacz.requestedUrl'), data(capture.requestedUrl));
  c.note(msg('wacz.finalUrl'), data(`${capture.finalUrl} (HTTP ${capture.status ?? '?'})`));
  c.note(msg('wacz.captured'), msg('wacz.fromTo', { from: capture.startedAt, to: capture.finishedAt }));
  if (capture.serverIp) c.note(msg('wacz.serverAddress'), data(capture.serverIp));
  if (capture.tls) {
    c.note(
      msg('wacz.tlsCertificate'),
      msg('wacz.tlsValue', {
        subject: capture.tls.subject,
        issuer: capture.tls.issuer,
        from: capture.tls.validFrom,
        to: capture.tls.validTo,
        sha256: capture.tls.sha256Fingerprint,
      }),
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
    msg('wacz.formAsRecorded'),
    msg('wacz.formValue', { recorded: formWord(recorded.form), signed: formWord(signed.form) }),
  );
  if (signed.form === 'anonymous') {
    c.expect(
      recorded.publicKeySha256 === signed.signer,
      msg('wacz.keyAsRecorded'),
      data(`${recorded.publicKeySha256}`),
    );
  } else if (signed.domain) {
    const leaf = signed.domainCerts[0];
    const fp = leaf ? toHex(await digest(new Uint8Array(leaf.toSchema().toBER(false)))) : '';
    c.expect(
      recorded.domain === signed.domain.domain && recorded.certificateSha256 === fp,
      msg('wacz.certificateAsRecorded'),
      data(`${recorded.domain}, SHA-256 ${recorded.certificateSha256}`),
    );
    const has = signed.domain.timeSignature !== undefined;
    const says = recorded.timeSignature?.status;
    c.expect(
      has === (says === 'included'),
      msg('wacz.timeSignatureAsRecorded'),
      msg(has ? 'wacz.timeSignatureHasOne' : 'wacz.timeSignatureHasNone', { says: statusWord(says) }),
    );
  }
}

/** A signature form as the record or signedData names it (`anonymous`, `domain`), in words. */
function formWord(form: string | undefined | null): Message {
  if (form === 'anonymous') return msg('wacz.formAnonymous');
  if (form === 'domain') return msg('wacz.formDomain');
  return data(String(form));
}

/** What the record says of its time signature (`included`, `unavailable`), in words. */
function statusWord(status: string | undefined): Message {
  if (status === undefined) return msg('wacz.notSaid');
  if (status === 'included') return msg('wacz.included');
  if (status === 'unavailable') return msg('wacz.unavailableStatus');
  return data(status);
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
