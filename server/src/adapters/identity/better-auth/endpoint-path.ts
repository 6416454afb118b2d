/**
 * The better-auth endpoint an HTTP request path names under `basePath` (its mount point, `/api/auth`), compared
 * loosely: percent-decoded, lower-cased, repeated and trailing slashes dropped, query and fragment ignored, so
 * that a spelling better-auth's router would not route is refused like the one it would (e.g.
 * `/API/auth//Reset-Password/` is `/reset-password`). Null when the path is not under `basePath`.
 */
export function authEndpointOf(url: string, basePath: string): string | null {
  const raw = url.split(/[?#]/, 1)[0] ?? '';
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Malformed escapes: compare the raw text.
  }
  const path = decoded.toLowerCase().replace(/\/+/g, '/').replace(/\/+$/, '');
  const base = basePath.toLowerCase().replace(/\/+$/, '');
  return path.startsWith(`${base}/`) ? path.slice(base.length) : null;
}
