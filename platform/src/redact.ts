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
 * - every query value and every bare query token, every matrix parameter's value (`;apikey=<key>`), and the
 *   fragment;
 * - on a known provider's host (`KNOWN_PROVIDER_HOSTS`), every path segment that is not a short lowercase word,
 *   a version (`v2`, `v1.1`) or a short number;
 * - on any host, a path segment that looks like a key (`isKeyLikeSegment`): 16 or more hex digits, or 20 or
 *   more token characters mixing letters and digits (base58, base64url, UUIDs), except `0x`-prefixed values
 *   and Stacks addresses, which are public and which error lines need (a transaction or account named).
 *
 * That is a heuristic for any URL in any text. The code that owns a configured endpoint knows more: every piece
 * of its URL may be a key (`secretsOfUrl`), and it redacts its messages with those pieces besides (`redactText`,
 * `redactError`, `redactDeep` with `secrets`).
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

/**
 * `path` with its key-like segments (`isKeyLikeSegment`, or on a known provider's host every segment that is not
 * structure) and the value of every matrix parameter (`;apikey=<key>`) replaced by `REDACTED`.
 */
function redactPath(path: string, host: string): string {
  const known = isKnownProviderHost(host);
  return path
    .split('/')
    .map((whole) => {
      const [segment = '', ...matrix] = whole.split(';');
      const secret = isKeyLikeSegment(segment) || (known && !isStructuralSegment(segment));
      const shown = secret ? REDACTED : segment;
      return [shown, ...matrix.map(redactParameter)].join(';');
    })
    .join('/');
}

/** One `name=value` query or matrix parameter with its value redacted; a bare token is redacted whole. */
function redactParameter(pair: string): string {
  if (pair === '') return pair;
  const eq = pair.indexOf('=');
  if (eq < 0) return REDACTED;
  return eq === pair.length - 1 ? pair : `${pair.slice(0, eq)}=${REDACTED}`;
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
  const path = redactPath(parts.path, hostOf(parts.hostPort));
  const userinfo = parts.userinfo === undefined ? '' : `${REDACTED}@`;
  const query = parts.query === undefined ? '' : `?${parts.query.split('&').map(redactParameter).join('&')}`;
  const fragment = parts.fragment === undefined ? '' : parts.fragment === '' ? '#' : `#${REDACTED}`;
  return `${parts.scheme}${userinfo}${parts.hostPort}${path}${query}${fragment}`;
}

/**
 * A parameter of a configured URL (query `?name=value` or matrix `;name=value`): its value is hidden wherever it
 * follows `name=`, however short.
 */
export interface SecretParameter {
  readonly name: string;
  readonly value: string;
}

/** What one endpoint's messages must not show (`secretsOfUrl`). */
export interface SecretSet {
  /** Hidden wherever they occur, when 4 characters or more (`MIN_SECRET_LENGTH`). */
  readonly pieces: readonly string[];
  /** Values hidden after their own `name=`, whatever their length. */
  readonly parameters: readonly SecretParameter[];
}

/** Secrets as the redaction functions take them: plain pieces, or a `SecretSet`. */
export type Secrets = readonly string[] | SecretSet;

/**
 * Shortest piece hidden wherever it occurs: a shorter one (`v2`, `rpc`, `eth`) would mangle ordinary words and
 * is hidden only where a URL's shape says it is a value (`redactUrl`, `SecretParameter`).
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * Host labels left of the registrable domain that name a role, not an account, and stay readable in messages.
 * Labels under `MIN_SECRET_LENGTH` (`www`, `api`, `rpc`, `ws`) are never hidden alone anyway.
 */
export const PUBLIC_HOST_LABELS: readonly string[] = [
  'www',
  'api',
  'rpc',
  'node',
  'gateway',
  'mainnet',
  'testnet',
  // Network names providers put in the host (sepolia.base.org, eth-mainnet.g.alchemy.com): every operator's log
  // names the network anyway.
  'sepolia',
  'holesky',
  'hoodi',
  'eth-mainnet',
  'eth-sepolia',
  'base-mainnet',
  'base-sepolia',
  'timestamp', // public TSAs: timestamp.digicert.com, timestamp.sectigo.com
  'smtp',
  'mail',
];

/** Second-level labels under a two-letter country TLD that are not a registrant's name (`gov.br`, `co.uk`). */
const COUNTRY_SECOND_LEVELS = new Set([
  'ac',
  'co',
  'com',
  'edu',
  'gob',
  'gov',
  'mil',
  'net',
  'nom',
  'or',
  'org',
]);

/**
 * The labels of `host` left of its registrable domain that are not in `PUBLIC_HOST_LABELS`: an account or a key
 * (`<key>.g.example.com`, `<name>.quiknode.pro`). The registrable domain is approximated without the Public Suffix
 * List: the last two labels, or three when they end in a country TLD under a generic second level
 * (`tsa.example.gov.br` → `example.gov.br`). An IP address or a one-label host has none.
 */
function secretHostLabels(host: string): string[] {
  if (host.includes(':') || /^[\d.]+$/.test(host)) return [];
  const labels = host.replace(/\.$/, '').split('.');
  const tld = labels.at(-1) ?? '';
  const second = labels.at(-2) ?? '';
  const kept = tld.length === 2 && COUNTRY_SECOND_LEVELS.has(second.toLowerCase()) ? 3 : 2;
  return labels
    .slice(0, Math.max(0, labels.length - kept))
    .filter((l) => !PUBLIC_HOST_LABELS.includes(l.toLowerCase()));
}

/** Adds `name=value` (`name` and `value` as written and decoded) to `out`; a bare token is a piece. */
function addParameter(pair: string, out: { pieces: string[]; parameters: SecretParameter[] }): void {
  const eq = pair.indexOf('=');
  const value = eq >= 0 ? pair.slice(eq + 1) : pair;
  if (value === '') return;
  out.pieces.push(value);
  if (eq <= 0) return;
  const name = pair.slice(0, eq);
  out.parameters.push({ name, value });
  const decoded = {
    name: safeDecode(name.replace(/\+/g, ' ')),
    value: safeDecode(value.replace(/\+/g, ' ')),
  };
  if (decoded.name !== name || decoded.value !== value) out.parameters.push(decoded);
}

/**
 * The secrets of a configured endpoint URL (`EVM_RPC_URL`, `TSA_URL`, an IPFS gateway, `SMTP_URL`…), for the
 * messages of the code that owns it: the userinfo (whole, user and password), every path segment, every query and
 * matrix (`;name=value`) parameter value, the fragment, and every host label left of the registrable domain but
 * those of `PUBLIC_HOST_LABELS` (`secretHostLabels`), each as written and percent-decoded. Pieces under
 * `MIN_SECRET_LENGTH` characters are left out, except parameter values, which are kept as `parameters`.
 * Used beside `redactUrl`'s heuristics, never instead (`redactText` applies both). Empty for a string that is
 * not an absolute `scheme://` URL.
 * Example: `https://u:pw@abc123.rpc.example.com/v2/k3yZ;apikey=k1?x=9` → pieces `u:pw`, `abc123`, `k3yZ`;
 * parameters `apikey=k1`, `x=9` (`u`, `pw`, `rpc`, `v2` are too short to be hidden alone).
 */
export function secretsOfUrl(url: string): SecretSet {
  const parts = splitUrl(url);
  if (!parts) return { pieces: [], parameters: [] };
  const out: { pieces: string[]; parameters: SecretParameter[] } = { pieces: [], parameters: [] };
  if (parts.userinfo) out.pieces.push(parts.userinfo, ...parts.userinfo.split(':'));
  out.pieces.push(...secretHostLabels(hostOf(parts.hostPort)));
  for (const whole of parts.path.split('/')) {
    const [segment = '', ...matrix] = whole.split(';');
    out.pieces.push(segment);
    for (const pair of matrix) addParameter(pair, out);
  }
  for (const pair of (parts.query ?? '').split('&')) addParameter(pair, out);
  if (parts.fragment) out.pieces.push(parts.fragment);
  const pieces = [...new Set(out.pieces.flatMap((p) => [p, safeDecode(p)]))];
  return { pieces: pieces.filter((p) => p.length >= MIN_SECRET_LENGTH), parameters: out.parameters };
}

/**
 * The pieces of `secretsOfUrl(url)` (its plain strings, without the short parameter values): for code that
 * passes a list of strings to `redactText`.
 */
export function urlSecrets(url: string): string[] {
  return [...secretsOfUrl(url).pieces];
}

/**
 * One `SecretSet` of several: each configured URL of a component (`secretsOfUrl`), plain keys (an API key sent
 * as a header), or sets made before. Undefined entries are skipped.
 */
export function joinSecrets(...sets: (Secrets | string | undefined)[]): SecretSet {
  const pieces: string[] = [];
  const parameters: SecretParameter[] = [];
  for (const set of sets) {
    if (set === undefined) continue;
    if (typeof set === 'string') pieces.push(set);
    else if (isSecretSet(set)) {
      pieces.push(...set.pieces);
      parameters.push(...set.parameters);
    } else pieces.push(...set);
  }
  return { pieces: [...new Set(pieces)], parameters };
}

function isSecretSet(secrets: Secrets): secrets is SecretSet {
  return !Array.isArray(secrets);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Characters that end a parameter's value in text: separators of URLs, quotes, brackets, whitespace. */
const VALUE_END = new Set([...'&;#/"\'<>`),}] \t\r\n']);

/** `text` with `value` replaced by `REDACTED` wherever `name=value` occurs and the value ends there. */
function hideParameter(text: string, { name, value }: SecretParameter): string {
  const pair = `${name}=${value}`;
  let out = '';
  let from = 0;
  for (let at = text.indexOf(pair); at >= 0; at = text.indexOf(pair, at + 1)) {
    const end = at + pair.length;
    if (end < text.length && !VALUE_END.has(text[end] as string)) continue;
    out += `${text.slice(from, at + name.length + 1)}${REDACTED}`;
    from = end;
  }
  return out + text.slice(from);
}

/**
 * `text` with each of `secrets` hidden (pieces of 4 characters or more wherever they occur, parameter values after
 * their `name=`), and nothing else: no URL heuristics. For text whose other URLs the caller built itself and must
 * keep readable (a catalog sync error names the page it fetched, `?page=2`); elsewhere use `redactText`.
 */
export function redactSecrets(text: string, secrets: Secrets): string {
  const { pieces, parameters } = isSecretSet(secrets) ? secrets : { pieces: secrets, parameters: [] };
  let out = text;
  // Longest first: a secret containing another is replaced whole.
  for (const secret of [...pieces].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  for (const parameter of parameters) out = hideParameter(out, parameter);
  return out;
}

/** Absolute URLs in free text; stops at whitespace, quotes, angle brackets, backquotes and backslashes. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]{0,30}:\/\/[^\s"'<>`\\]+/gi;
/** Punctuation that ends a sentence or a bracket around a URL rather than belonging to it. */
const TRAILING = /[).,;:!?\]}]+$/;

/**
 * `text` with every absolute URL in it redacted (`redactUrl`), then each of `secrets` hidden (`secretsOfUrl` of
 * the endpoints the caller owns, or plain keys): a piece of 4 characters or more (`MIN_SECRET_LENGTH`) wherever
 * it occurs, a parameter's value after its `name=`. Text without `://` and without any of the secrets is returned
 * as it is.
 */
export function redactText(text: string, secrets: Secrets = []): string {
  const out = text.includes('://')
    ? text.replace(URL_IN_TEXT, (match) => {
        const tail = TRAILING.exec(match)?.[0] ?? '';
        return redactUrl(match.slice(0, match.length - tail.length)) + tail;
      })
    : text;
  return redactSecrets(out, secrets);
}

/**
 * A plain `Error` carrying `error`'s name, redacted message and stack (`redactText`), its `code` when that is a
 * string or number, and its redacted `cause` (3 levels at most); every other property is dropped (ethers errors
 * carry the request, the response and `info.requestUrl`). A non-`Error` becomes an `Error` of its redacted
 * string form. Use it where an adapter's error leaves the adapter.
 */
export function redactError(error: unknown, secrets: Secrets = [], depth = 0): Error {
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
export function redactDeep(value: unknown, secrets: Secrets = []): unknown {
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
