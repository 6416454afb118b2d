import { describe, expect, it } from 'vitest';
import { hasForwardingHeaders, isDirectLoopbackRequest, isLoopbackAddress } from './local-request';

/** Which requests development conveniences are served to (the HTTP side: test/e2e/dev-conveniences.test.ts). */
describe('isDirectLoopbackRequest', () => {
  const req = (remoteAddress: string | undefined, headers: Record<string, string> = {}) => ({
    headers,
    socket: { remoteAddress },
  });

  it.each(['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])(
    '%s without proxy headers: direct',
    (ip) => {
      expect(isDirectLoopbackRequest(req(ip))).toBe(true);
    },
  );

  it.each([
    '10.0.0.5',
    '192.168.1.20',
    '203.0.113.7',
    '::ffff:10.0.0.5',
    'fe80::1',
    '::',
    '0.0.0.0',
    undefined,
  ])('a peer at %s is never direct', (ip) => {
    expect(isDirectLoopbackRequest(req(ip))).toBe(false);
  });

  it('a loopback peer that forwards for someone (a same-host reverse proxy) is not direct', () => {
    for (const name of [
      'forwarded',
      'via',
      'x-forwarded-for',
      'x-forwarded-host',
      'x-forwarded-proto',
      'x-real-ip',
    ]) {
      expect(hasForwardingHeaders({ [name]: '1' })).toBe(true);
      expect(isDirectLoopbackRequest(req('127.0.0.1', { [name]: '127.0.0.1' }))).toBe(false);
    }
    expect(isLoopbackAddress('128.0.0.1')).toBe(false);
    expect(isLoopbackAddress('127.0.0.1.example')).toBe(false);
  });
});
