import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses the catalog may connect to for a provider (issue 12, Indicator catalog: SSRF). Pure: no DNS,
 * no sockets; `egress.ts` applies it to every address actually connected.
 *
 * An address is public when ipaddr.js 2.5 classes it `unicast` (IANA's special-purpose registries, RFC 6890):
 * every other range (private RFC 1918, loopback, link-local, unique-local RFC 4193, CGNAT RFC 6598,
 * multicast, unspecified, broadcast, reserved, documentation, benchmarking, 6to4, Teredo...) is refused.
 * IPv4-mapped (`::ffff:a.b.c.d`, RFC 4291 2.5.5.2), IPv4-translated (RFC 6145) and NAT64 well-known-prefix
 * (`64:ff9b::/96`, RFC 6052) addresses are judged by the IPv4 address they carry. Cloud metadata endpoints
 * are refused even when an allow-list entry covers them.
 */

/** An entry of `CATALOG_PROVIDER_ALLOW_HOSTS`. */
export type AllowEntry =
  /** `host` or `host:port`: a name (matched against the URL's host name) or an IP literal. */
  | { kind: 'host'; host: string; port: number | undefined; text: string }
  /** `10.0.0.0/8`, `::1/128`: any address in the range, any port. */
  | { kind: 'cidr'; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; text: string };

/**
 * Cloud instance metadata services (AWS/GCP/Azure/OpenStack IPv4 and AWS IPv6 IMDS, Alibaba, Oracle):
 * never a provider, whatever the allow-list says.
 */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254',
  '169.254.170.2',
  'fd00:ec2::254',
  '100.100.100.200',
  '192.0.0.192',
]);

/** The canonical text of an IP literal (IPv4 dotted quad; IPv6 RFC 5952), or undefined when it is none. */
export function canonicalIp(text: string): string | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIP(bare) === 0) return undefined;
  const ip = ipaddr.parse(bare);
  return ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString();
}

/** The IPv4 address an IPv6 address carries (mapped, translated, NAT64 well-known prefix), if any. */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = ip.range();
  if (range === 'ipv4Mapped') return ip.toIPv4Address();
  if (range === 'rfc6145' || (range === 'rfc6052' && ip.match(ipaddr.IPv6.parseCIDR('64:ff9b::/96')))) {
    const [, , , , , , hi = 0, lo = 0] = ip.parts;
    return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  }
  return undefined;
}

/**
 * Classifies an IP literal: `public`, `cloud-metadata`, or ipaddr.js's range name (`private`, `loopback`,
 * `linkLocal`, `uniqueLocal`, `carrierGradeNat`, `multicast`, `unspecified`, `reserved`...).
 * @throws Error when `address` is not an IP literal.
 */
export function classifyAddress(address: string): string {
  const canonical = canonicalIp(address);
  if (canonical === undefined) throw new Error(`not an IP address: ${address}`);
  let ip = ipaddr.parse(canonical);
  if (ip.kind() === 'ipv6') ip = embeddedIpv4(ip as ipaddr.IPv6) ?? ip;
  if (METADATA_ADDRESSES.has(canonical) || METADATA_ADDRESSES.has(ip.toString())) return 'cloud-metadata';
  const range = ip.range();
  return range === 'unicast' ? 'public' : range;
}

/** The address as the allow-list compares it: IPv4-mapped IPv6 as its IPv4 address. */
function comparable(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.process(canonicalIp(address) ?? address);
}

/**
 * Parses one allow-list entry: `host`, `host:port`, `[v6]`, `[v6]:port` or a CIDR (`10.0.0.0/8`, `::1/128`).
 * Host names are compared case-insensitively, without a trailing dot.
 * @throws Error naming the entry when it is none of these.
 */
export function parseAllowEntry(raw: string): AllowEntry {
  const text = raw.trim();
  if (text.includes('/')) {
    if (!ipaddr.isValidCIDR(text)) throw new Error(`"${text}" is not a CIDR range`);
    const [ip, bits] = ipaddr.parseCIDR(text);
    const range: [ipaddr.IPv4 | ipaddr.IPv6, number] =
      ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
        ? [(ip as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)]
        : [ip, bits];
    return { kind: 'cidr', range, text };
  }
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const plain = /^([^:[\]\s]+)(?::(\d+))?$/.exec(text);
  const bareV6 = isIP(text) === 6 ? [text, text, undefined] : null;
  const match = bracketed ?? plain ?? bareV6;
  if (!match?.[1]) throw new Error(`"${text}" is not host, host:port or a CIDR range`);
  const portText = match[2];
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    throw new Error(`"${text}": port out of range`);
  }
  const ip = canonicalIp(match[1]);
  if (bracketed && ip === undefined) throw new Error(`"${text}": brackets hold an IPv6 address only`);
  const host = ip ?? match[1].toLowerCase().replace(/\.$/, '');
  if (ip === undefined && !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) {
    throw new Error(`"${text}" is not a host name`);
  }
  return { kind: 'host', host, port, text };
}

/** Parses a comma-separated allow-list (empty entries ignored). @throws Error naming the first bad entry. */
export function parseAllowList(text: string | undefined): AllowEntry[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseAllowEntry);
}

/** The allow-list entry naming exactly `url`'s host and port (the reference provider of `start:catalog`). */
export function exactEntryFor(url: string): AllowEntry {
  const u = new URL(url);
  return parseAllowEntry(`${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`);
}

/** What the catalog is about to connect to: the URL's host name (or IP literal), the port, the address. */
export interface Destination {
  /** Host name of the URL, lower-case, without brackets; an IP literal when the URL has one. */
  hostname: string;
  port: number;
  /** The address resolved for `hostname` (the one connected to). */
  address: string;
}

/**
 * Why connecting to `destination` is refused, or undefined when it is allowed: cloud metadata always refused;
 * then allowed when an entry matches (a name entry by the URL's host name and port, an IP entry by the
 * address and port, a CIDR by the address); then allowed when the address is public.
 */
export function refusal(destination: Destination, entries: readonly AllowEntry[]): string | undefined {
  const kind = classifyAddress(destination.address);
  if (kind === 'cloud-metadata') return describeRange(kind);
  const name = destination.hostname.toLowerCase().replace(/\.$/, '');
  const address = comparable(destination.address);
  const canonical = address.toString();
  for (const entry of entries) {
    if (entry.kind === 'cidr') {
      if (address.kind() === entry.range[0].kind() && address.match(entry.range)) return undefined;
      continue;
    }
    if (entry.port !== undefined && entry.port !== destination.port) continue;
    const entryIp = canonicalIp(entry.host);
    if (entryIp !== undefined ? comparable(entryIp).toString() === canonical : entry.host === name) {
      return undefined;
    }
  }
  return kind === 'public' ? undefined : describeRange(kind);
}

const RANGE_WORDS: Record<string, string> = {
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT (RFC 6598)',
  deprecatedSiteLocal: 'site-local',
  rfc6052: 'NAT64 local-use',
  '6to4': '6to4',
  as112: 'AS112',
  as112v6: 'AS112',
  amt: 'AMT',
};

/** `a loopback address`, `an unspecified address`, `a link-local address` for a `classifyAddress` result. */
export function describeRange(kind: string): string {
  const words = kind === 'cloud-metadata' ? 'cloud metadata' : (RANGE_WORDS[kind] ?? kind);
  return `${/^[aeiou]/i.test(words) ? 'an' : 'a'} ${words} address`;
}
