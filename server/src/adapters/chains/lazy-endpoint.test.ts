import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { startLazyDevnet } from './lazy-endpoint';

/** A loopback HTTP server standing in for a devnet: answers `hello` to every request. */
async function fakeDevnet(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.end('hello'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('startLazyDevnet', () => {
  it('a failed start is reported and closes the connection; the next connection starts it and is forwarded', async () => {
    const errors: unknown[] = [];
    let starts = 0;
    const lazy = await startLazyDevnet(
      async () => {
        starts += 1;
        if (starts === 1) throw new Error('no devnet this time');
        return fakeDevnet();
      },
      { api: (d) => d.url },
      (e) => errors.push(e),
    );
    try {
      expect([starts, lazy.started()]).toEqual([0, false]);
      await expect(fetch(lazy.urls.api)).rejects.toThrow();
      expect(errors.map(errorMessage)).toEqual(['no devnet this time']);
      expect(lazy.started()).toBe(false);
      expect(await (await fetch(lazy.urls.api)).text()).toBe('hello');
      expect([starts, lazy.started()]).toEqual([2, true]);
      // Started once: later connections go to the same devnet.
      expect(await (await fetch(lazy.urls.api)).text()).toBe('hello');
      expect(starts).toBe(2);
    } finally {
      await lazy.stop();
    }
    await expect(fetch(lazy.urls.api)).rejects.toThrow();
    await expect(lazy.use()).rejects.toThrow(/stopped/);
  });
});
