import os from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  AddressPolicy,
  INTERFACE_REFRESH_MS,
  interfaceAddresses,
  parseAllowHosts,
  unmapIpv4,
} from './address-policy';

describe('capture address policy (issue 15)', () => {
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
      parseAllowHosts('127.0.0.1:8080, intranet.example, 10.1.0.0/16 [::1]:9000'),
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
      expect(() => parseAllowHosts(bad), bad).toThrow();
    }
    expect(parseAllowHosts('')).toEqual([]);
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
    const open = new AddressPolicy(parseAllowHosts('0.0.0.0/0, ::/0'));
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
