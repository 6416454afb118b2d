import type { IpfsImportRequest } from '../common/bridge';
import { type CidCheck, checkCid } from '../common/cid';
import { type ClientError, isClientError } from '../common/errors';
import { errorText, type Translate } from './i18n';

/**
 * Logic of "Import from IPFS" on the Notarize screen, kept out of React so it can be tested: the form's
 * request (or the reason it cannot be sent) and the sentences of the CID check and of the server's errors
 * (spec, Errors: 400 invalid CID or missing consent, 403 role, 413 over 250 MB, 429 with the wait, 502 gateway).
 */

/** What the form holds, as typed. */
export interface IpfsForm {
  cid: string;
  name: string;
  consent: boolean;
}

export type IpfsFormCheck =
  | { ok: true; request: IpfsImportRequest }
  | { ok: false; cid: CidCheck; needsConsent: boolean };

/**
 * The request of a filled form: the trimmed CID when it is a bare CID, the trimmed name only when one was
 * given (the server defaults it to the CID), `consent: true` only when ticked; otherwise what is missing.
 */
export function ipfsRequest(form: IpfsForm): IpfsFormCheck {
  const cid = checkCid(form.cid);
  if (!cid.ok || !form.consent) return { ok: false, cid, needsConsent: !form.consent };
  const name = form.name.trim();
  return { ok: true, request: { cid: cid.cid, consent: true, ...(name ? { fileName: name } : {}) } };
}

/** The sentence of a CID the local check refused (null when it is fine). */
export function cidProblemText(t: Translate, check: CidCheck): string | null {
  if (check.ok) return null;
  switch (check.problem) {
    case 'empty':
      return t('ipfs.cid.empty');
    case 'path':
      return check.suggestion ? t('ipfs.cid.pathSuggest', { cid: check.suggestion }) : t('ipfs.cid.path');
    case 'uppercase':
      return t('ipfs.cid.uppercase');
    case 'other-base':
      return t('ipfs.cid.otherBase');
    case 'v0':
      return t('ipfs.cid.v0');
    case 'v1':
      return t('ipfs.cid.v1');
    case 'codec':
      return t('ipfs.cid.codec');
    case 'hash':
      return t('ipfs.cid.hash');
    default:
      return t('ipfs.cid.unknown');
  }
}

/**
 * Headline of an import's failure, in the UI language: the import's own sentence for the statuses the
 * endpoint defines, the app's usual one otherwise (offline, session expired...). The server's detail is
 * shown underneath by `ErrorNotice`.
 */
export function ipfsImportErrorText(t: Translate, error: unknown, serverUrl: string): string | null {
  if (!isClientError(error)) return null;
  const e: ClientError = error;
  switch (e.kind) {
    case 'bad-request':
      // Both 400s of the endpoint: the client always sends consent, so it is the CID unless the server says.
      return /consent/i.test(e.message) ? t('ipfs.err.consent') : t('ipfs.err.invalidCid');
    case 'invalid-input':
      return t('ipfs.cid.unknown');
    case 'forbidden':
      return t('ipfs.err.forbidden');
    case 'too-large':
      return t('ipfs.err.tooLarge');
    case 'rate-limited':
      return e.retryAfterSeconds
        ? t('ipfs.err.rateLimited', { seconds: e.retryAfterSeconds })
        : t('ipfs.err.rateLimitedShort');
    case 'bad-gateway':
      return t('ipfs.err.badGateway');
    case 'not-found':
      // A server without the procedure (older version) answers tRPC's NOT_FOUND.
      return t('ipfs.err.notOffered');
    default:
      return errorText(t, e, serverUrl);
  }
}
