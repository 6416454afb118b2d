import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from './loopback';

describe('isLoopbackHost', () => {
  it('knows this machine by name, 127.0.0.0/8 and ::1, however spelled', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      'localhost.',
      '127.0.0.1',
      '127.0.0.2',
      '127.255.255.254',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
    ]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it('refuses anything else: other hosts, wildcards, IPv4-mapped, short or out-of-range IPv4, look-alikes', () => {
    for (const host of [
      '',
      '0.0.0.0',
      '::',
      '192.168.1.10',
      '10.0.0.1',
      '1.127.0.0',
      '127.0.0.256',
      '127.1',
      '127.example.org',
      'localhost6',
      'catalog.example.org',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      '[::ffff:7f00:1]',
      '::2',
      '1::1',
      '::1::',
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
