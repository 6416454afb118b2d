/**
 * Why `value` cannot be a chain endpoint a user typed (the desktop client's verify screen, the verifier page),
 * or null when it can: an http(s) URL (`not-url`, `scheme`) without credentials, query or fragment
 * (`credentials`); plain http only on `127.0.0.1` or `localhost` (`insecure`: the pages' Content-Security-Policy
 * allows https and those two, and an answer read in clear from elsewhere could be altered on the way).
 */
export function endpointProblem(value: string): 'not-url' | 'scheme' | 'credentials' | 'insecure' | null {
  // Not `URL.canParse`: the verifier page runs in browsers of early 2023 that lack it.
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not-url';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'scheme';
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return 'credentials';
  if (url.protocol === 'http:' && url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
    return 'insecure';
  }
  return null;
}
