/**
 * Redaction of secrets that travel inside URLs, for every text that leaves the process as a log line or is
 * stored as an error (`anchor_tx.last_error`, a catalog provider's sync error).
 *
 * Chain RPC providers put their API key in the URL itself: in the path (Alchemy `…/v2/<key>`, Infura
 * `…/v3/<project id>`, QuickNode `https://<name>.quiknode.pro/<token>/`, Ankr `rpc.ankr.com/<chain>/<key>`,
 * Blast `…blastapi.io/<project id>`, Chainstack `…p2pify.com/<key>`, dRPC `lb.drpc.org/<chain>/<key>`, Hiro's
 * Platform API `api.platform.hiro.so/v1/ext/<key>/…`), in the query (`?apikey=`, dRPC `?dkey=`) or as
 * credentials (`https://user:pass@host`). Libraries echo the URL they called in their error messages (ethers:
 * `info={ "requestUrl": … }`; Node's fetch: "Request cannot be constructed from a URL that includes
 * credentials: …"), so an operator's key would reach the logs and the database with the first failed call.
 *
 * What a redacted URL keeps: scheme, host and port (which endpoint failed), the path's structural segments
 * (`v2`, `ext`, chain names) and the query's parameter names. What it hides, each replaced by `REDACTED`:
 * - the userinfo (`user:pass@`, or a lone token before `@`);
 * - every query value and every bare query token, and the fragment;
 * - on a known provider's host (`KNOWN_PROVIDER_HOSTS`), every path segment that is not a short lowercase word,
 *   a version (`v2`, `v1.1`) or a short number;
 * - on any host, a path segment that looks like a key (`isKeyLikeSegment`): 16 or more hex digits, or 20 or
 *   more token characters mixing letters and digits (base58, base64url, UUIDs), except `0x`-prefixed values
 *   and Stacks addresses, which are public and which error lines need (a transaction or account named).
 */

/** What replaces a redacted secret. Chosen to be valid inside a URL, so a redacted URL still parses. */
export const REDACTED = '***';

/**
 * Hosts of RPC and node providers known to carry the key in the URL path, matched as the host itself or a
 * parent domain (`eth-mainnet.g.alchemy.com` matches `alchemy.com`).
 */
export const KNOWN_PROVIDER_HOSTS: readonly string[] = [
  'alchemy.com', // Alchemy: https://<network>.g.alchemy.com/v2/<key>
  'alchemyapi.io', // Alchemy's former domain
  'infura.io', // Infura: https://<network>.infura.io/v3/<project id>
  'quiknode.pro', // QuickNode: https://<name>.<network>.quiknode.pro/<token>/
  'quiknode.io',
  'ankr.com', // Ankr: https://rpc.ankr.com/<chain>/<key>
  'blastapi.io', // Blast: https://<network>.blastapi.io/<project id>
  'p2pify.com', // Chainstack: https://nd-123-456-789.p2pify.com/<key>
  'chainstack.com', // Chainstack: https://<network>.core.chainstack.com/<key>
  'drpc.org', // dRPC: https://lb.drpc.org/<chain>/<key>, https://lb.drpc.org/ogrpc?network=…&dkey=<key>
  'hiro.so', // Hiro Platform API: https://api.platform.hiro.so/v1/ext/<key>/…
  'getblock.io', // GetBlock: https://go.getblock.io/<token>
  'nodereal.io', // NodeReal: https://<network>.nodereal.io/v1/<key>
  'blockpi.network', // BlockPI: https://<network>.blockpi.network/v1/rpc/<key>
  'tenderly.co', // Tenderly: https://<network>.gateway.tenderly.co/<key>
  'grove.city', // Grove (Pocket): https://<network>.rpc.grove.city/v1/<app id>
  'onfinality.io', // OnFinality: https://<network>.api.onfinality.io/rpc?apikey=<key>
  'chainnodes.org', // Chainnodes: https://<network>.chainnodes.org/<key>
];

/** A URL's parts as written (no normalization: what is not redacted reads exactly as it was). */
interface UrlParts {
  scheme: string;
  userinfo: string | undefined;
  hostPort: string;
  path: string;
  query: string | undefined;
  fragment: string | undefined;
}

const URL_SHAPE = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/is;

function splitUrl(url: string): UrlParts | undefined {
  const m = URL_SHAPE.exec(url);
  if (!m) return undefined;
  const authority = m[2] ?? '';
  const at = authority.lastIndexOf('@');
  return {
    scheme: m[1] ?? '',
    userinfo: at >= 0 ? authority.slice(0, at) : undefined,
    hostPort: at >= 0 ? authority.slice(at + 1) : authority,
    path: m[3] ?? '',
    query: m[4],
    fragment: m[5],
  };
}

/** The host of `hostPort` in lowercase, without port or IPv6 brackets. */
function hostOf(hostPort: string): string {
  const h = hostPort.toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h.slice(1) : h.slice(1, end);
  }
  const colon = h.lastIndexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/** True when `host` is one of `KNOWN_PROVIDER_HOSTS` or a subdomain of one. */
export function isKnownProviderHost(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return KNOWN_PROVIDER_HOSTS.some((d) => h === d || h.endsWith(`.${d}`));
}

/** Stacks c32 addresses (`SP…`, `ST…`, `SM…`, `SN…`): public, kept so error lines still name the account. */
const STACKS_ADDRESS = /^S[PMTN][0-9A-HJKMNP-TV-Z]{38,40}$/;

/** `0x`-prefixed values (transaction hashes, EVM addresses) and Stacks addresses: public, never redacted. */
function isPublicSegment(segment: string): boolean {
  return /^0x[0-9a-f]*$/i.test(segment) || STACKS_ADDRESS.test(segment);
}

/**
 * True for a path segment that looks like an API key on any host: 16 or more hex digits (Infura project ids,
 * QuickNode tokens, Ankr and Chainstack keys), or 20 or more characters of `[A-Za-z0-9_.=-]` with both letters
 * and digits (Alchemy keys, base58 and base64url tokens, UUIDs). `0x`-prefixed hex (transaction hashes,
 * addresses) and Stacks addresses are public and not matched.
 */
export function isKeyLikeSegment(segment: string): boolean {
  if (isPublicSegment(segment)) return false;
  if (/^[0-9a-f]{16,}$/i.test(segment)) return true;
  return (
    segment.length >= 20 &&
    /^[A-Za-z0-9_.=~-]+$/.test(segment) &&
    /\d/.test(segment) &&
    /[A-Za-z]/.test(segment)
  );
}

/**
 * On a known provider's host: the segments that are structure, not a key: lowercase words up to 24 characters
 * (chain names such as `eth_sepolia`, `ext`, `stacks-blockchain-api`), versions and short numbers.
 */
function isStructuralSegment(segment: string): boolean {
  return (
    segment === '' ||
    isPublicSegment(segment) ||
    (segment.length <= 24 && /^[a-z]+(?:[_-][a-z]+)*$/.test(segment)) ||
    /^v\d+(?:\.\d+)*$/i.test(segment) ||
    /^\d{1,6}$/.test(segment)
  );
}

/** The pieces of `url` that `redactUrl` hides (userinfo and its parts, query values, key segments, fragment). */
function secretParts(parts: UrlParts): { path: string; secrets: string[] } {
  const secrets: string[] = [];
  const known = isKnownProviderHost(hostOf(parts.hostPort));
  const segments = parts.path.split('/').map((segment) => {
    const secret = isKeyLikeSegment(segment) || (known && !isStructuralSegment(segment));
    if (!secret) return segment;
    secrets.push(segment);
    return REDACTED;
  });
  if (parts.userinfo !== undefined && parts.userinfo !== '') {
    secrets.push(parts.userinfo, ...parts.userinfo.split(':'));
  }
  for (const pair of (parts.query ?? '').split('&')) {
    const eq = pair.indexOf('=');
    const value = eq >= 0 ? pair.slice(eq + 1) : pair;
    if (value !== '') secrets.push(value);
  }
  if (parts.fragment) secrets.push(parts.fragment);
  return { path: segments.join('/'), secrets };
}

/**
 * `url` with its secrets replaced by `REDACTED` (see the module comment): credentials, query values, the
 * fragment, and path keys. A string that is not an absolute `scheme://` URL is returned unchanged.
 * Examples: `https://eth-mainnet.g.alchemy.com/v2/AbC…` → `https://eth-mainnet.g.alchemy.com/v2/***`;
 * `https://u:p@node.example/rpc?apikey=k&x=1` → `https://***@node.example/rpc?apikey=***&x=***`.
 */
export function redactUrl(url: string): string {
  const parts = splitUrl(url);
  if (!parts) return url;
  const { path } = secretParts(parts);
  const userinfo = parts.userinfo === undefined ? '' : `${REDACTED}@`;
  const query =
    parts.query === undefined
      ? ''
      : `?${parts.query
          .split('&')
          .map((pair) => {
            if (pair === '') return pair;
            const eq = pair.indexOf('=');
            if (eq < 0) return REDACTED;
            return eq === pair.length - 1 ? pair : `${pair.slice(0, eq)}=${REDACTED}`;
          })
          .join('&')}`;
  const fragment = parts.fragment === undefined ? '' : parts.fragment === '' ? '#' : `#${REDACTED}`;
  return `${parts.scheme}${userinfo}${parts.hostPort}${path}${query}${fragment}`;
}

/**
 * The secrets of a configured URL (`EVM_RPC_URL`, `STACKS_API_URL`, …) as plain strings: its userinfo (whole
 * and each part), query values, fragment and the path segments `redactUrl` hides. Passed to `redactText` by the
 * code that owns the URL, so a key a node echoes on its own ("invalid project id <id>") is hidden too.
 * Pieces shorter than 6 characters are left out (they would redact ordinary words).
 */
export function urlSecrets(url: string): string[] {
  const parts = splitUrl(url);
  if (!parts) return [];
  const { secrets } = secretParts(parts);
  return [...new Set(secrets.map(safeDecode).concat(secrets))].filter((s) => s.length >= 6);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Absolute URLs in free text; stops at whitespace, quotes, angle brackets, backquotes and backslashes. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]{0,30}:\/\/[^\s"'<>`\\]+/gi;
/** Punctuation that ends a sentence or a bracket around a URL rather than belonging to it. */
const TRAILING = /[).,;:!?\]}]+$/;

/**
 * `text` with every absolute URL in it redacted (`redactUrl`), then every occurrence of each of `secrets`
 * (from `urlSecrets`, 6 characters or more) replaced by `REDACTED`. Text without `://` and without any of the
 * secrets is returned as it is.
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text.includes('://')
    ? text.replace(URL_IN_TEXT, (match) => {
        const tail = TRAILING.exec(match)?.[0] ?? '';
        return redactUrl(match.slice(0, match.length - tail.length)) + tail;
      })
    : text;
  // Longest first: a secret containing another is replaced whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= 6 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/**
 * A plain `Error` carrying `error`'s name, redacted message and stack (`redactText`), its `code` when that is a
 * string or number, and its redacted `cause` (3 levels at most); every other property is dropped (ethers errors
 * carry the request, the response and `info.requestUrl`). A non-`Error` becomes an `Error` of its redacted
 * string form. Use it where an adapter's error leaves the adapter.
 */
export function redactError(error: unknown, secrets: readonly string[] = [], depth = 0): Error {
  if (!(error instanceof Error)) return new Error(redactText(String(error), secrets));
  const cause =
    error.cause !== undefined && depth < 3
      ? { cause: redactError(error.cause, secrets, depth + 1) }
      : undefined;
  const out = new Error(redactText(error.message, secrets), cause);
  // Not enumerable, as on the original: a serializer lists the same fields.
  Object.defineProperty(out, 'name', { value: error.name, writable: true, configurable: true });
  out.stack = error.stack === undefined ? undefined : redactText(error.stack, secrets);
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') Object.assign(out, { code });
  return out;
}

/**
 * A copy of `value` with every string redacted (`redactText`), through arrays, objects and errors (an `Error`
 * becomes `{type, message, stack, ...own enumerable fields}`), 8 levels deep; deeper values and cycles become
 * `'[…]'`; dates, binary data and other primitives are kept. For structured log fields such as pino's
 * serialized `err`.
 */
export function redactDeep(value: unknown, secrets: readonly string[] = []): unknown {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redactText(v, secrets);
    if (typeof v !== 'object' || v === null || v instanceof Date || ArrayBuffer.isView(v)) return v;
    if (depth >= 8 || seen.has(v)) return '[…]';
    seen.add(v);
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    if (v instanceof Error) {
      out.type = v.name;
      out.message = walk(v.message, depth + 1);
      out.stack = walk(v.stack, depth + 1);
    }
    for (const [key, item] of Object.entries(v)) out[key] = walk(item, depth + 1);
    return out;
  };
  return walk(value, 0);
}
