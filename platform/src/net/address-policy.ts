import { isIP } from 'node:net';
import os from 'node:os';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a service may connect to on behalf of someone else (a web capture's page, an indicator
 * provider's URL): the one SSRF address policy of the services. Pure apart from reading this machine's
 * interface addresses: no DNS, no sockets; the caller applies it to every address it actually connects to (so
 * DNS rebinding does not pass).
 *
 * An address is public when ipaddr.js 2.5 classes it `unicast` (IANA's special-purpose registries, RFC 6890)
 * and it is not IPv4-compatible (`::a.b.c.d`, deprecated by RFC 4291 2.5.5.1): every other range (private
 * RFC 1918, loopback, link-local, unique-local RFC 4193, site-local, CGNAT RFC 6598, multicast, unspecified,
 * broadcast, reserved, documentation, benchmarking, discard, 6to4, Teredo, NAT64 local-use...) is refused.
 * IPv4-mapped (`::ffff:a.b.c.d`, RFC 4291 2.5.5.2), IPv4-translated (RFC 6145) and NAT64 well-known-prefix
 * (`64:ff9b::/96`, RFC 6052) addresses are judged by the IPv4 address they carry. Cloud metadata endpoints
 * are refused whatever an allow-list says.
 */

/**
 * An allow-list entry (`CAPTURE_ALLOW_HOSTS`, `CATALOG_PROVIDER_ALLOW_HOSTS`): `text` is the entry as written.
 */
export type AllowEntry =
  /** `host` or `host:port`: a name (lower-case, no trailing dot) or an IP literal (canonical, no brackets). */
  | { kind: 'host'; host: string; port: number | undefined; text: string }
  /** `10.0.0.0/8`, `::1/128`: any address in the range, any port (IPv4-mapped ranges as IPv4). */
  | { kind: 'cidr'; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; text: string };

/**
 * Cloud instance metadata services (AWS/GCP/Azure/OpenStack IPv4 and AWS IPv6 IMDS, Alibaba, Oracle):
 * never a destination, whatever an allow-list says.
 */
export const CLOUD_METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  '169.254.169.254',
  '169.254.170.2',
  'fd00:ec2::254',
  '100.100.100.200',
  '192.0.0.192',
]);

/** IPv4-compatible IPv6 addresses (`::/96`, RFC 4291 2.5.5.1, deprecated), which ipaddr.js calls unicast. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

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
  if (range === 'rfc6145' || (range === 'rfc6052' && ip.match(NAT64_WELL_KNOWN))) {
    const [, , , , , , hi = 0, lo = 0] = ip.parts;
    return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  }
  return undefined;
}

/**
 * The IPv4 address an IPv4-mapped (`::ffff:a.b.c.d`, `::ffff:7f00:1`) or IPv4-translated (`::ffff:0:a.b.c.d`)
 * IPv6 address stands for, else the input unchanged.
 */
export function unmapIpv4(address: string): string {
  if (isIP(address) !== 6) return address;
  const ip = ipaddr.IPv6.parse(address);
  const range = ip.range();
  return range === 'ipv4Mapped' || range === 'rfc6145' ? (embeddedIpv4(ip)?.toString() ?? address) : address;
}

/**
 * Classifies an IP literal: `public`, `cloud-metadata`, `ipv4Compatible` or ipaddr.js's range name
 * (`private`, `loopback`, `linkLocal`, `uniqueLocal`, `carrierGradeNat`, `multicast`, `unspecified`,
 * `reserved`...).
 * @throws Error `not an IP address: <address>` when `address` is not an IP literal.
 */
export function classifyAddress(address: string): string {
  const canonical = canonicalIp(address);
  if (canonical === undefined) throw new Error(`not an IP address: ${address}`);
  let ip = ipaddr.parse(canonical);
  if (ip.kind() === 'ipv6') ip = embeddedIpv4(ip as ipaddr.IPv6) ?? ip;
  if (CLOUD_METADATA_ADDRESSES.has(canonical) || CLOUD_METADATA_ADDRESSES.has(ip.toString())) {
    return 'cloud-metadata';
  }
  const range = ip.range();
  if (range === 'unicast' && ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return range === 'unicast' ? 'public' : range;
}

/** Whether `address` (an IP literal in any spelling, IPv4-mapped included) is a cloud metadata endpoint. */
export function isCloudMetadata(address: string): boolean {
  return canonicalIp(address) !== undefined && classifyAddress(address) === 'cloud-metadata';
}

/** The address as allow-lists compare it: IPv4-mapped IPv6 as its IPv4 address, without a zone. */
function comparable(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.process(canonicalIp(address.split('%')[0] ?? address) ?? address);
}

/**
 * Parses one allow-list entry: `host`, `host:port`, `[v6]`, `[v6]:port`, a bare IPv6 address or a CIDR
 * (`10.0.0.0/8`, `::1/128`). Host names are compared case-insensitively, without a trailing dot.
 * @throws Error naming the entry when it is none of these (`"10.0.0.0/33" is not a CIDR range`,
 *   `"host:99999": port out of range`...).
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

/**
 * Parses an allow-list: entries separated by commas and/or white space (empty entries ignored).
 * @throws Error naming the first bad entry (see `parseAllowEntry`).
 */
export function parseAllowList(text: string | undefined): AllowEntry[] {
  return (text ?? '')
    .split(/[\s,]+/)
    .filter((s) => s !== '')
    .map(parseAllowEntry);
}

/** The allow-list entry naming exactly `url`'s host and port (the reference provider of `start:catalog`). */
export function exactEntryFor(url: string): AllowEntry {
  const u = new URL(url);
  return parseAllowEntry(`${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`);
}

/** Whether `address` lies in the CIDR range of `entry`. */
function inRange(address: ipaddr.IPv4 | ipaddr.IPv6, entry: AllowEntry & { kind: 'cidr' }): boolean {
  return address.kind() === entry.range[0].kind() && address.match(entry.range);
}

/** What is about to be connected to: the URL's host name (or IP literal), the port, the address. */
export interface Destination {
  /** Host name of the URL, without brackets; an IP literal when the URL has one. */
  hostname: string;
  port: number;
  /** The address resolved for `hostname` (the one connected to). */
  address: string;
}

/**
 * The indicator catalog's rule for operator-registered providers. Why connecting to `destination` is refused
 * (`a loopback address`, `a cloud metadata address`...), or undefined when it is allowed: cloud metadata always
 * refused; then allowed when an entry matches (a name entry by the URL's host name and port, an IP entry by
 * the address connected and port, whatever name led to it, a CIDR by the address); then allowed when the
 * address is public.
 * @throws Error when `destination.address` is not an IP literal.
 */
export function refusal(destination: Destination, entries: readonly AllowEntry[]): string | undefined {
  const kind = classifyAddress(destination.address);
  if (kind === 'cloud-metadata') return describeRange(kind);
  const name = destination.hostname.toLowerCase().replace(/\.$/, '');
  const address = comparable(destination.address);
  const canonical = address.toString();
  for (const entry of entries) {
    if (entry.kind === 'cidr') {
      if (inRange(address, entry)) return undefined;
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
  ipv4Compatible: 'IPv4-compatible',
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

/**
 * Every address of every network interface of this machine (`os.networkInterfaces()`, loopback, private and
 * public alike), read now: an address added since the last call (a new interface, a renumbering) is included.
 */
export function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/**
 * Why `AddressPolicy` refuses an address: outside the public ranges (cloud metadata included), or held by this
 * machine itself. For the operator's log, beside the address; a client is only told that the destination is
 * not a public address.
 */
export type AddressRefusal = 'not an IP address' | 'not a public address' | 'an address of this machine';

/**
 * How long one reading of this machine's interface addresses is used, in milliseconds: an address the machine
 * gains is refused at most this long after (reading them costs a system call walk of every interface, about
 * 0.2 ms, and a page may open thousands of connections).
 */
export const INTERFACE_REFRESH_MS = 1_000;

/** What `AddressPolicy` reads beside its allow list (tests inject the interfaces and the clock). */
export interface AddressPolicyOptions {
  /** This machine's interface addresses (default: `interfaceAddresses`). */
  interfaceAddresses?: () => string[];
  /** A monotonic clock in milliseconds (default: `performance.now`). */
  now?: () => number;
}

/**
 * The web capture's rule for URLs any editor may submit: public addresses only, never a cloud metadata
 * endpoint, never one of this machine's own interface addresses (a public address the host holds reaches the
 * service's own ports as surely as loopback does), unless an allow entry opens an exception. Host entries
 * match the URL's host as written (`localhost` is not `127.0.0.1`): naming a host is the only way to reach
 * this machine itself. CIDR entries match the address connected to, this machine's own excepted.
 */
export class AddressPolicy {
  private readonly hosts: Array<{ host: string; port: number | undefined }>;
  private readonly ranges: Array<AllowEntry & { kind: 'cidr' }>;
  private readonly readInterfaces: () => string[];
  private readonly now: () => number;
  private own: { list: Set<string>; readAt: number } | undefined;

  constructor(allow: readonly AllowEntry[], options: AddressPolicyOptions = {}) {
    this.hosts = allow.flatMap((e) => (e.kind === 'host' ? [{ host: e.host, port: e.port }] : []));
    this.ranges = allow.filter((e): e is AllowEntry & { kind: 'cidr' } => e.kind === 'cidr');
    this.readInterfaces = options.interfaceAddresses ?? interfaceAddresses;
    this.now = options.now ?? (() => performance.now());
  }

  /** Whether `host` (as written in the URL, brackets removed) at `port` is named by an allow entry. */
  allowsHost(host: string, port: number): boolean {
    const h = canonicalIp(host) ?? host.toLowerCase().replace(/\.$/, '');
    return this.hosts.some((e) => e.host === h && (e.port === undefined || e.port === port));
  }

  /** Whether `address` (an IP literal) lies in a CIDR range of the allow list (this machine's own or not). */
  inAllowedRange(address: string): boolean {
    if (canonicalIp(address) === undefined) return false;
    const ip = comparable(address);
    return this.ranges.some((e) => inRange(ip, e));
  }

  /**
   * Why `address` (an IP literal) may not be connected to, or undefined when it may: never a cloud metadata
   * address; any other address of a host named by an allow entry (`hostAllowed`); else a public address that
   * is not this machine's own, or an address of an allowed CIDR range that is not this machine's own.
   * The interfaces are read again when the last reading is `INTERFACE_REFRESH_MS` old, so an address the
   * machine gains is refused too.
   */
  refusal(address: string, hostAllowed: boolean): AddressRefusal | undefined {
    if (canonicalIp(address) === undefined) return hostAllowed ? undefined : 'not an IP address';
    const kind = classifyAddress(address);
    if (kind === 'cloud-metadata') return 'not a public address';
    if (hostAllowed) return undefined;
    const ip = comparable(address);
    if (this.isOwn(ip.toString())) return 'an address of this machine';
    if (this.ranges.some((e) => inRange(ip, e))) return undefined;
    return kind === 'public' ? undefined : 'not a public address';
  }

  /** Whether `ip` (comparable form) is one of this machine's interface addresses (a reading at most a second old). */
  private isOwn(ip: string): boolean {
    const now = this.now();
    if (!this.own || now - this.own.readAt >= INTERFACE_REFRESH_MS) {
      const list = new Set<string>();
      for (const raw of this.readInterfaces()) {
        // A link-local IPv6 address may carry its zone (`fe80::1%eth0`): the address is what is compared.
        if (canonicalIp(raw.split('%')[0] ?? raw) !== undefined) list.add(comparable(raw).toString());
      }
      this.own = { list, readAt: now };
    }
    return this.own.list.has(ip);
  }
}
