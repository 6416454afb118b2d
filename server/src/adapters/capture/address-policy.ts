import { BlockList, isIP } from 'node:net';
import os from 'node:os';

/**
 * Address ranges a capture never connects to (issue 15, "Never a way into our network"): this host, private
 * networks, link-local (cloud metadata at 169.254.169.254), CGNAT, multicast, reserved and documentation ranges,
 * and the IPv6 equivalents (unique local, link-local, NAT64, 6to4, Teredo). Sources: RFC 6890 (special-purpose
 * registries), RFC 1918, RFC 6598, RFC 4193, RFC 4291, RFC 6052.
 */
const DENIED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const DENIED_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

const denied = new BlockList();
for (const [net, prefix] of DENIED_V4) denied.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of DENIED_V6) denied.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, `::ffff:7f00:1`) stands for, else the input. */
export function unmapIpv4(address: string): string {
  const m = /^::ffff:(?:0:)?(.+)$/i.exec(address);
  if (!m?.[1]) return address;
  const rest = m[1];
  if (isIP(rest) === 4) return rest;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(rest);
  if (!hex?.[1] || !hex[2]) return address;
  const hi = Number.parseInt(hex[1], 16);
  const lo = Number.parseInt(hex[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** One `CAPTURE_ALLOW_HOSTS` entry: a host name or IP literal with an optional port, or a CIDR range. */
export type AllowEntry =
  | { kind: 'host'; host: string; port: number | undefined }
  | { kind: 'cidr'; network: string; prefix: number; family: 'ipv4' | 'ipv6' };

/**
 * Parses `CAPTURE_ALLOW_HOSTS` (comma- or space-separated): `host`, `host:port`, `[v6]:port` or a CIDR range
 * `a.b.c.d/n`, `v6/n`. Host names compare case-insensitively with the URL's host as written (not with what it
 * resolves to: a name that resolves to an allowed address is still checked by address); CIDR ranges compare
 * with the address actually connected to.
 * @throws Error naming the entry that does not parse.
 */
export function parseAllowHosts(value: string): AllowEntry[] {
  const entries: AllowEntry[] = [];
  for (const raw of value.split(/[\s,]+/).filter(Boolean)) {
    const cidr = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(raw);
    if (cidr?.[1] && cidr[2]) {
      const family = isIP(cidr[1]);
      const prefix = Number(cidr[2]);
      if (family === 0 || prefix > (family === 4 ? 32 : 128)) throw new Error(`bad CIDR range: ${raw}`);
      entries.push({ kind: 'cidr', network: cidr[1], prefix, family: family === 4 ? 'ipv4' : 'ipv6' });
      continue;
    }
    const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(raw);
    const plain = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw);
    const m = bracketed ?? plain;
    if (!m?.[1] || (m[2] !== undefined && Number(m[2]) > 65535)) throw new Error(`bad host entry: ${raw}`);
    if (!bracketed && isIP(raw) === 6) {
      entries.push({ kind: 'host', host: raw.toLowerCase(), port: undefined });
      continue;
    }
    entries.push({
      kind: 'host',
      host: m[1].toLowerCase(),
      port: m[2] === undefined ? undefined : Number(m[2]),
    });
  }
  return entries;
}

/**
 * Every address of every network interface of this machine (`os.networkInterfaces()`, loopback, private and
 * public alike), read now: an address added since the last call (a new interface, a renumbering) is included.
 */
export function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/**
 * Why an address is refused: outside the public ranges, or held by this machine itself. For the operator's
 * log, beside the address; a client is only told that the destination is not a public address.
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
 * Decides where a capture may connect: public addresses only, never one of this machine's own interface
 * addresses (a public address the host holds reaches the service's own ports as surely as loopback does),
 * unless `CAPTURE_ALLOW_HOSTS` opens an exception. Checked by the capture proxy on the address it is about to
 * connect to (DNS rebinding does not pass: the checked address is the one connected to).
 */
export class AddressPolicy {
  private readonly hosts: Array<{ host: string; port: number | undefined }>;
  private readonly ranges = new BlockList();
  private readonly readInterfaces: () => string[];
  private readonly now: () => number;
  private own: { list: BlockList; readAt: number } | undefined;

  constructor(allow: AllowEntry[], options: AddressPolicyOptions = {}) {
    this.hosts = allow.flatMap((e) => (e.kind === 'host' ? [{ host: e.host, port: e.port }] : []));
    for (const e of allow) if (e.kind === 'cidr') this.ranges.addSubnet(e.network, e.prefix, e.family);
    this.readInterfaces = options.interfaceAddresses ?? interfaceAddresses;
    this.now = options.now ?? (() => performance.now());
  }

  /** Whether `host` (as written in the URL, brackets removed) at `port` is named by an allow entry. */
  allowsHost(host: string, port: number): boolean {
    const h = host.toLowerCase();
    return this.hosts.some((e) => e.host === h && (e.port === undefined || e.port === port));
  }

  /**
   * Why `address` (an IP literal) may not be connected to, or undefined when it may: a public address that is
   * not this machine's own, an address of an allowed CIDR range that is not this machine's own, or any address
   * of a host named by an allow entry (`hostAllowed`: the only way to reach this machine itself, by naming it).
   * The interfaces are read again when the last reading is `INTERFACE_REFRESH_MS` old, so an address the
   * machine gains is refused too.
   */
  refusal(address: string, hostAllowed: boolean): AddressRefusal | undefined {
    if (hostAllowed) return undefined;
    const ip = unmapIpv4(address);
    const family = isIP(ip);
    if (family === 0) return 'not an IP address';
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.isOwn(ip, type)) return 'an address of this machine';
    if (this.ranges.check(ip, type)) return undefined;
    if (denied.check(ip, type)) return 'not a public address';
    return undefined;
  }

  /** Whether `ip` (unmapped) is one of this machine's interface addresses (a reading at most a second old). */
  private isOwn(ip: string, type: 'ipv4' | 'ipv6'): boolean {
    const now = this.now();
    if (!this.own || now - this.own.readAt >= INTERFACE_REFRESH_MS) {
      const list = new BlockList();
      for (const raw of this.readInterfaces()) {
        // A link-local IPv6 address may carry its zone (`fe80::1%eth0`): the address is what is compared.
        const a = unmapIpv4(raw.split('%')[0] ?? raw);
        const f = isIP(a);
        if (f !== 0) list.addAddress(a, f === 4 ? 'ipv4' : 'ipv6');
      }
      this.own = { list, readAt: now };
    }
    return this.own.list.check(ip, type);
  }
}
