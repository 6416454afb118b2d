/** The four octets of a dotted-decimal IPv4 address (each 0–255), or null. */
function ipv4Octets(text: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

/** The eight 16-bit groups of an IPv6 address (RFC 4291 section 2.2, `::` and a dotted IPv4 tail), or null. */
function ipv6Groups(text: string): number[] | null {
  let body = text;
  const tail = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (tail) {
    const o = ipv4Octets(tail[2] ?? '');
    if (!o) return null;
    body = `${tail[1]}${(((o[0] ?? 0) << 8) | (o[1] ?? 0)).toString(16)}:${(((o[2] ?? 0) << 8) | (o[3] ?? 0)).toString(16)}`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string | undefined): number[] | null => {
    if (!part) return [];
    const groups = part.split(':');
    return groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups.map((g) => Number.parseInt(g, 16)) : null;
  };
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  if (!head || !rest) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const zeros = 8 - head.length - rest.length;
  return zeros >= 1 ? [...head, ...new Array<number>(zeros).fill(0), ...rest] : null;
}

/**
 * True when `host` (a listen address, or a URL's hostname) names this machine only: `localhost` (RFC 6761
 * section 6.3; case and one trailing dot ignored), an IPv4 address in 127.0.0.0/8 (RFC 1122 section 3.2.1.3)
 * in dotted decimal, or `::1` (RFC 4291 section 2.5.3) in any IPv6 spelling, bare or in brackets. Anything else
 * is false: other names, wildcard addresses (`0.0.0.0`, `::`), IPv4-mapped addresses (`::ffff:127.0.0.1`: not
 * `::1`, and a filter that reads them as IPv4 is easy to get wrong), short IPv4 forms (`127.1`) and octets
 * past 255.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (bare === 'localhost') return true;
  const v4 = ipv4Octets(bare);
  if (v4) return v4[0] === 127;
  const v6 = ipv6Groups(bare);
  if (!v6) return false;
  return v6.slice(0, 7).every((g) => g === 0) && v6[7] === 1;
}
