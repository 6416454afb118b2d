/**
 * The local check of a web page address before `documents.capture` is called (spec, Endpoints:
 * `POST /api/documents/capture`, "http or https"). The server is the authority (it alone resolves the host and refuses
 * private, loopback or otherwise disallowed destinations); this only turns the common mistakes into a sentence before
 * any request: no scheme, another scheme (`file:`, `ftp:`, `javascript:`), user name or password in the URL (WHATWG URL
 * "userinfo"), or text that is no URL at all.
 *
 * Platform-neutral: used by the renderer (the sentence), the web bridge and Electron main (IPC validation).
 */

/** Longest URL the service accepts (characters, `CAPTURE_URL_MAX` of `@notary/shared`). */
export const MAX_CAPTURE_URL_LENGTH = 8192;

/** Why a string is not an address the service can capture; the renderer has one sentence per reason. */
export type CaptureUrlProblem =
  | 'empty'
  | 'too-long'
  | 'no-scheme' // `example.com/page`: the scheme is required (https:// suggested)
  | 'scheme' // `ftp:`, `file:`, `javascript:`, `data:`…: only http and https pages are captured
  | 'credentials' // `https://user:pass@host/`: the server refuses userinfo (it would be archived)
  | 'invalid'; // not parseable as a URL, or without a host

export type CaptureUrlCheck =
  | { ok: true; url: string }
  | { ok: false; problem: CaptureUrlProblem; suggestion?: string };

function parse(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/**
 * Checks an address typed or pasted by the user (surrounding white space ignored).
 * @returns `{ok: true, url}` with the trimmed address as typed (the server normalizes it), or
 *   `{ok: false, problem}`; for a bare host (`example.com/a`) the `https://` form as `suggestion`.
 */
export function checkCaptureUrl(input: string): CaptureUrlCheck {
  const text = input.trim();
  if (!text) return { ok: false, problem: 'empty' };
  if (text.length > MAX_CAPTURE_URL_LENGTH) return { ok: false, problem: 'too-long' };
  // A scheme is a letter then letters, digits, + - . (RFC 3986 section 3.1). `example.com:8080/a` parses
  // with the scheme `example.com`, but it is a host with a port: the scheme was left out.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
  const hostWithPort = scheme !== undefined && /^\d+(?:[/?#]|$)/.test(text.slice(scheme.length + 1));
  if (scheme === undefined || hostWithPort) {
    if (/\s/.test(text)) return { ok: false, problem: 'invalid' };
    const guess = parse(`https://${text}`);
    if (!guess?.hostname) return { ok: false, problem: 'invalid' };
    // Suggest only a plausible public name (a dot in it) without userinfo.
    return guess.hostname.includes('.') && !guess.username && !guess.password
      ? { ok: false, problem: 'no-scheme', suggestion: guess.href }
      : { ok: false, problem: 'no-scheme' };
  }
  if (scheme !== 'http' && scheme !== 'https') return { ok: false, problem: 'scheme' };
  const url = parse(text);
  if (!url?.hostname || /\s/.test(text)) return { ok: false, problem: 'invalid' };
  if (url.username || url.password) return { ok: false, problem: 'credentials' };
  return { ok: true, url: text };
}

/** True for an address the service may be asked to capture (`checkCaptureUrl(s).ok`, already trimmed). */
export function isCaptureUrl(s: string): boolean {
  const check = checkCaptureUrl(s);
  return check.ok && check.url === s;
}

/**
 * The screenshot link of a capture as an `<img src>`: only an http(s) URL without credentials (the server's
 * presigned URL, valid 300 s); null for anything else (`javascript:`, `data:`, `file:`, user:pass@).
 */
export function screenshotSrc(screenshot: string | null | undefined): string | null {
  if (!screenshot) return null;
  const url = parse(screenshot);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return null;
  if (url.username || url.password) return null;
  return url.href;
}
