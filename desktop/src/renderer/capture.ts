import type { DocumentDto } from '@notary/shared';
import type { WebCaptureRequest } from '../common/bridge';
import { type CaptureUrlCheck, checkCaptureUrl, screenshotSrc } from '../common/capture-url';
import { type ClientError, isClientError } from '../common/errors';
import { errorText, type Translate } from './i18n';

/**
 * Logic of "Capture a web page" on the Notarize screen, kept out of React so it can be tested: the form's request (or
 * the reason it cannot be sent), the record to show, and the sentences of the URL check and of the server's errors
 * (spec, Errors: 400 URL or destination, 403 role, 429 rate or queue, 502 unreachable, 503 no Chromium, 504 timed out).
 */

/** What the form holds, as typed. */
export interface CaptureForm {
  url: string;
  name: string;
  consent: boolean;
}

export type CaptureFormCheck =
  | { ok: true; request: WebCaptureRequest }
  | { ok: false; url: CaptureUrlCheck; needsConsent: boolean };

/**
 * The request of a filled form: the trimmed address when it is http(s) without credentials, the trimmed
 * name only when one was given (the server names the WACZ `<host>-<time>.wacz`), `consent: true` only when
 * ticked; otherwise what is missing.
 */
export function captureRequest(form: CaptureForm): CaptureFormCheck {
  const url = checkCaptureUrl(form.url);
  if (!url.ok || !form.consent) return { ok: false, url, needsConsent: !form.consent };
  const name = form.name.trim();
  return { ok: true, request: { url: url.url, consent: true, ...(name ? { fileName: name } : {}) } };
}

/** The sentence of an address the local check refused (null when it is fine). */
export function captureUrlProblemText(t: Translate, check: CaptureUrlCheck): string | null {
  if (check.ok) return null;
  switch (check.problem) {
    case 'empty':
      return t('capture.url.empty');
    case 'too-long':
      return t('capture.url.tooLong');
    case 'no-scheme':
      return check.suggestion
        ? t('capture.url.noSchemeSuggest', { url: check.suggestion })
        : t('capture.url.noScheme');
    case 'scheme':
      return t('capture.url.scheme');
    case 'credentials':
      return t('capture.url.credentials');
    default:
      return t('capture.url.invalid');
  }
}

/** What the record shows of a capture: the page's address, and the screenshot when it may be an `<img>`. */
export interface CaptureRecord {
  serial: string;
  /** The URL as requested (`sourceUri`): the DTO carries no final URL or HTTP status of the page. */
  pageUrl: string | null;
  screenshot: string | null;
}

/** The record of a captured document (`sourceType: "web-capture"`); null for any other source. */
export function captureRecord(
  doc: Pick<DocumentDto, 'serialNumber' | 'sourceType' | 'sourceUri' | 'screenshot'>,
): CaptureRecord | null {
  if (doc.sourceType !== 'web-capture') return null;
  return { serial: doc.serialNumber, pageUrl: doc.sourceUri, screenshot: screenshotSrc(doc.screenshot) };
}

/**
 * Headline of a capture's failure, in the UI language: the capture's own sentence for the statuses the
 * endpoint defines (502 and 504 share the kind `bad-gateway`; the status tells them apart), the app's usual
 * one otherwise (offline, session expired...). The server's detail is shown underneath by `ErrorNotice`.
 */
export function captureErrorText(t: Translate, error: unknown, serverUrl: string): string | null {
  if (!isClientError(error)) return null;
  const e: ClientError = error;
  switch (e.kind) {
    case 'bad-request':
      // The client always sends consent: a 400 is the address or its destination unless the server says.
      return /consent/i.test(e.message) ? t('capture.err.consent') : t('capture.err.invalidUrl');
    case 'invalid-input':
      return t('capture.url.invalid');
    case 'forbidden':
      return t('capture.err.forbidden');
    case 'too-large':
      return t('capture.err.tooLarge');
    case 'rate-limited':
      return e.retryAfterSeconds
        ? t('capture.err.rateLimited', { seconds: e.retryAfterSeconds })
        : t('capture.err.rateLimitedShort');
    case 'bad-gateway':
      return e.status === 504 ? t('capture.err.timeout') : t('capture.err.unreachable');
    case 'unavailable':
      return t('capture.err.noBrowser');
    case 'not-found':
      // A server without the procedure (older version) answers tRPC's NOT_FOUND.
      return t('capture.err.notOffered');
    default:
      return errorText(t, e, serverUrl);
  }
}
