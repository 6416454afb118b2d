import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { classifyAddress, exactEntryFor, parseAllowEntry, parseAllowList, refusal } from './address-policy';

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

  it('a bad CATALOG_PROVIDER_ALLOW_HOSTS stops the configuration, naming the variable', () => {
    expect(() => loadConfig({ CATALOG_PROVIDER_ALLOW_HOSTS: '127.0.0.1:3200,10.0.0.0/99' })).toThrow(
      /CATALOG_PROVIDER_ALLOW_HOSTS: "10\.0\.0\.0\/99" is not a CIDR range/,
    );
    expect(loadConfig({}).provider.allowHosts).toEqual([]);
  });
});
