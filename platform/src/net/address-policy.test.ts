import os from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  AddressPolicy,
  classifyAddress,
  exactEntryFor,
  INTERFACE_REFRESH_MS,
  interfaceAddresses,
  isCloudMetadata,
  parseAllowEntry,
  parseAllowList,
  refusal,
  unmapIpv4,
} from './address-policy';

/** The address classifier and allow-list, as units: nothing here connects anywhere. */
describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['169.254.1.1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456:789a::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2002:7f00:1::', '6to4'],
    // IPv4-mapped, IPv4-translated and NAT64 addresses are judged by the IPv4 address they carry.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:0:192.168.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
  ])('%s is refused as %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    '169.254.169.254',
    '169.254.170.2',
    'fd00:ec2::254',
    '100.100.100.200',
    '192.0.0.192',
    '::ffff:169.254.169.254',
  ])('%s is a cloud metadata address', (address) => {
    expect(classifyAddress(address)).toBe('cloud-metadata');
  });

  it('throws on what is not an IP address', () => {
    expect(() => classifyAddress('localhost')).toThrow('not an IP address');
    expect(() => classifyAddress('2130706433')).toThrow('not an IP address');
  });
});

describe('allow-list', () => {
  const entries = parseAllowList(
    '127.0.0.1:4000, 10.0.0.0/8, ::1/128, provider.internal, cache.internal:8080, 169.254.0.0/16',
  );
  const at = (hostname: string, port: number, address: string) =>
    refusal({ hostname, port, address }, entries);

  it('allows public addresses without an entry', () => {
    expect(at('example.org', 443, '93.184.215.14')).toBeUndefined();
  });

  it('host:port of an IP allows that address on that port only, whatever name led to it', () => {
    expect(at('127.0.0.1', 4000, '127.0.0.1')).toBeUndefined();
    expect(at('localhost', 4000, '127.0.0.1')).toBeUndefined();
    expect(at('127.0.0.1', 4000, '::ffff:127.0.0.1')).toBeUndefined();
    expect(at('127.0.0.1', 4001, '127.0.0.1')).toBe('a loopback address');
    expect(at('127.0.0.2', 4000, '127.0.0.2')).toBe('a loopback address');
  });

  it('a CIDR allows its range on any port, never a cloud metadata address', () => {
    expect(at('10.9.8.7', 1, '10.9.8.7')).toBeUndefined();
    expect(at('::1', 80, '::1')).toBeUndefined();
    expect(at('11.0.0.1', 80, '11.0.0.1')).toBeUndefined();
    expect(at('192.168.0.1', 80, '192.168.0.1')).toBe('a private address');
    expect(at('169.254.1.1', 80, '169.254.1.1')).toBeUndefined();
    expect(at('169.254.169.254', 80, '169.254.169.254')).toBe('a cloud metadata address');
  });

  it('a name entry allows that name (any port, or its port), not another name on the same address', () => {
    expect(at('provider.internal', 80, '192.168.7.7')).toBeUndefined();
    expect(at('PROVIDER.internal.', 9999, '192.168.7.7')).toBeUndefined();
    expect(at('cache.internal', 8080, '192.168.7.8')).toBeUndefined();
    expect(at('cache.internal', 8081, '192.168.7.8')).toBe('a private address');
    expect(at('evil.example', 80, '192.168.7.7')).toBe('a private address');
  });

  it('parses every entry form and refuses malformed ones by name', () => {
    expect(parseAllowEntry('[::1]:8080')).toMatchObject({ kind: 'host', host: '::1', port: 8080 });
    expect(parseAllowEntry('::1')).toMatchObject({ kind: 'host', host: '::1', port: undefined });
    expect(parseAllowEntry('Example.COM.:443')).toMatchObject({ host: 'example.com', port: 443 });
    expect(parseAllowEntry('::ffff:10.0.0.0/104')).toMatchObject({ kind: 'cidr' });
    expect(exactEntryFor('http://127.0.0.1:3200')).toMatchObject({ host: '127.0.0.1', port: 3200 });
    expect(exactEntryFor('https://[::1]/')).toMatchObject({ host: '::1', port: 443 });
    expect(() => parseAllowEntry('foo bar')).toThrow('"foo bar"');
    expect(() => parseAllowEntry('10.0.0.0/33')).toThrow('not a CIDR range');
    expect(() => parseAllowEntry('host:99999')).toThrow('port out of range');
    expect(() => parseAllowEntry('[nothost]:80')).toThrow('IPv6');
    expect(() => parseAllowEntry('http://x')).toThrow();
    expect(parseAllowList(' , ')).toEqual([]);
  });
});

describe('AddressPolicy (web capture)', () => {
  // The ranges alone: this machine's own addresses are tested below.
  const closed = new AddressPolicy([], { interfaceAddresses: () => [] });

  it('refuses this host, private, link-local, CGNAT, multicast and reserved addresses, v4, v6 and mapped', () => {
    for (const address of [
      '127.0.0.1',
      '127.0.0.2',
      '0.0.0.0',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '240.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      'fd00::1',
      'fe80::1',
      'ff02::1',
      '64:ff9b::a00:1',
      '2002:7f00:1::1',
    ]) {
      expect(closed.refusal(address, false), address).toMatch(/not a public address/);
    }
  });

  it('lets public addresses through', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(closed.refusal(address, false), address).toBeUndefined();
    }
  });

  it('unmaps IPv4-mapped IPv6 in both spellings', () => {
    expect(unmapIpv4('::ffff:169.254.169.254')).toBe('169.254.169.254');
    expect(unmapIpv4('::FFFF:a9fe:a9fe')).toBe('169.254.169.254');
    expect(unmapIpv4('2001:db8::1')).toBe('2001:db8::1');
  });

  it('CAPTURE_ALLOW_HOSTS: host entries by name as written (and port), CIDR entries by address', () => {
    const policy = new AddressPolicy(
      parseAllowList('127.0.0.1:8080, intranet.example, 10.1.0.0/16 [::1]:9000'),
      { interfaceAddresses: () => [] },
    );
    expect(policy.allowsHost('127.0.0.1', 8080)).toBe(true);
    expect(policy.allowsHost('127.0.0.1', 8081)).toBe(false);
    // A name resolving to an allowed address is not the allowed host.
    expect(policy.allowsHost('localhost', 8080)).toBe(false);
    expect(policy.allowsHost('INTRANET.example', 443)).toBe(true);
    expect(policy.allowsHost('::1', 9000)).toBe(true);
    expect(policy.refusal('10.1.2.3', false)).toBeUndefined();
    expect(policy.refusal('10.2.0.1', false)).toMatch(/not a public address/);
    expect(policy.refusal('10.2.0.1', true)).toBeUndefined();
  });

  it('refuses entries that do not parse', () => {
    for (const bad of ['http://host', '10.0.0.0/33', 'host:99999', 'a b/c']) {
      expect(() => parseAllowList(bad), bad).toThrow();
    }
    expect(parseAllowList('')).toEqual([]);
  });

  it('refusals never name the address (they reach the operator log beside it, the client not at all)', () => {
    const policy = new AddressPolicy([], { interfaceAddresses: () => ['93.184.215.14'] });
    for (const address of ['10.0.0.1', '169.254.169.254', 'fd00::1', '93.184.215.14', 'nonsense']) {
      const refusal = policy.refusal(address, false);
      expect(refusal, address).toBeDefined();
      expect(refusal, address).not.toContain(address);
    }
  });

  it("refuses every address of this machine's interfaces, read from the system, even inside allowed ranges", () => {
    const own = interfaceAddresses();
    const listed = Object.values(os.networkInterfaces()).flatMap((l) => (l ?? []).map((i) => i.address));
    expect(own).toEqual(listed);
    expect(own).toContain('127.0.0.1');
    // Ranges that open everything: only this machine's own addresses stay closed.
    const open = new AddressPolicy(parseAllowList('0.0.0.0/0, ::/0'));
    for (const address of own) {
      expect(open.refusal(address, false), address).toBe('an address of this machine');
    }
    expect(open.refusal('10.9.8.7', false)).toBeUndefined();
    // Named explicitly (a host entry, the URL's host as written), this machine is reachable.
    expect(open.refusal('127.0.0.1', true)).toBeUndefined();
  });

  it('refuses a public address this machine holds, in any spelling (IPv4-mapped, IPv6 forms, zone)', () => {
    const policy = new AddressPolicy([], {
      interfaceAddresses: () => ['93.184.215.14', '2606:4700:0:0::1111', 'fe80::1%eth0'],
    });
    for (const address of ['93.184.215.14', '::ffff:93.184.215.14', '::ffff:5db8:d70e', '2606:4700::1111']) {
      expect(policy.refusal(address, false), address).toBe('an address of this machine');
    }
    expect(policy.refusal('fe80::1', false)).toBe('an address of this machine');
    expect(policy.refusal('93.184.215.15', false)).toBeUndefined();
  });

  it('sees an address the machine gains once the last reading is INTERFACE_REFRESH_MS old', () => {
    let now = 0;
    let reads = 0;
    const held = ['127.0.0.1'];
    const policy = new AddressPolicy([], {
      interfaceAddresses: () => {
        reads++;
        return [...held];
      },
      now: () => now,
    });
    expect(policy.refusal('8.8.4.4', false)).toBeUndefined();
    held.push('8.8.4.4');
    // Within the same reading (one system call for a burst of connections)...
    now = INTERFACE_REFRESH_MS - 1;
    expect(policy.refusal('8.8.4.4', false)).toBeUndefined();
    expect(reads).toBe(1);
    // ...and refused from the next one on.
    now = INTERFACE_REFRESH_MS;
    expect(policy.refusal('8.8.4.4', false)).toBe('an address of this machine');
    expect(reads).toBe(2);
  });
});

describe('one policy for both services', () => {
  const closed = new AddressPolicy([], { interfaceAddresses: () => [] });

  it('IPv4-compatible addresses (::a.b.c.d, deprecated) are refused, named', () => {
    expect(classifyAddress('::7f00:1')).toBe('ipv4Compatible');
    expect(classifyAddress('::808:808')).toBe('ipv4Compatible');
    expect(refusal({ hostname: 'x', port: 80, address: '::808:808' }, [])).toBe('an IPv4-compatible address');
    expect(closed.refusal('::808:808', false)).toBe('not a public address');
  });

  it('NAT64 addresses are judged by the IPv4 address they carry, the local-use prefix refused', () => {
    expect(closed.refusal('64:ff9b::808:808', false)).toBeUndefined();
    expect(closed.refusal('64:ff9b::7f00:1', false)).toBe('not a public address');
    expect(closed.refusal('64:ff9b:1::808:808', false)).toBe('not a public address');
  });

  it('a capture never reaches cloud metadata, whatever the allow list opens', () => {
    const open = new AddressPolicy(parseAllowList('0.0.0.0/0 ::/0 169.254.169.254'), {
      interfaceAddresses: () => [],
    });
    for (const address of ['169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '100.100.100.200']) {
      expect(isCloudMetadata(address), address).toBe(true);
      expect(open.refusal(address, true), address).toBe('not a public address');
      expect(open.refusal(address, false), address).toBe('not a public address');
    }
    expect(isCloudMetadata('169.254.1.1')).toBe(false);
    expect(isCloudMetadata('metadata.google.internal')).toBe(false);
  });

  it('allow lists separate entries by commas and white space; IP host entries compare canonically', () => {
    expect(parseAllowList('a.example, b.example c.example\n10.0.0.0/8').map((e) => e.text)).toEqual([
      'a.example',
      'b.example',
      'c.example',
      '10.0.0.0/8',
    ]);
    const policy = new AddressPolicy(parseAllowList('[2001:DB8:0::1]:443 Intranet.Example.'), {
      interfaceAddresses: () => [],
    });
    expect(policy.allowsHost('2001:db8::1', 443)).toBe(true);
    expect(policy.allowsHost('intranet.example', 80)).toBe(true);
    expect(policy.allowsHost('2001:db8::1', 80)).toBe(false);
  });
});
