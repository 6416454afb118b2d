import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy, parseAllowList } from './address-policy';
import { AddressRefusedError, policedFetch } from './policed-fetch';

/** A loopback server answering `handler`, with the paths it was asked. */
async function serve(handler: (path: string) => { status: number; location?: string; body?: string }) {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    const answer = handler(req.url ?? '/');
    res.writeHead(answer.status, answer.location ? { location: answer.location } : {}).end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('policedFetch', () => {
  let target: Awaited<ReturnType<typeof serve>>;
  let hops: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    target = await serve(() => ({ status: 200, body: 'secret' }));
    hops = await serve((p) => {
      const n = Number(/^\/hop\/(\d+)/.exec(p)?.[1] ?? 0);
      if (p.startsWith('/to-target')) return { status: 302, location: `${target.url}/x` };
      if (p.startsWith('/to-metadata')) return { status: 307, location: 'http://169.254.169.254/latest/' };
      if (p.startsWith('/to-file')) return { status: 301, location: 'file:///etc/passwd' };
      if (p.startsWith('/hop/') && n < 4) return { status: 303, location: `/hop/${n + 1}` };
      if (p.startsWith('/post')) return { status: 302, location: '/done' };
      return { status: 200, body: 'ok' };
    });
  });
  afterAll(async () => {
    await target?.stop();
    await hops?.stop();
  });

  it('refuses loopback, private, link-local and metadata addresses by default, before any request', async () => {
    const fetcher = policedFetch();
    await expect(fetcher(`${target.url}/x`)).rejects.toThrow(
      /refused by the address policy \(a loopback address\)/,
    );
    await expect(fetcher('http://169.254.169.254/latest/meta-data/')).rejects.toThrow(
      /\(a cloud metadata address\)/,
    );
    await expect(fetcher('http://10.1.2.3/')).rejects.toThrow(/\(a private address\)/);
    await expect(fetcher('http://169.254.1.1/')).rejects.toThrow(/\(a link-local address\)/);
    await expect(fetcher('http://[::1]:9/')).rejects.toThrow(/\(a loopback address\)/);
    await expect(fetcher('ftp://example.com/')).rejects.toThrow(/scheme ftp: is not http\(s\)/);
    // A name is judged by every address it resolves to.
    const resolving = policedFetch({ resolve: async () => ['93.184.215.14', '127.0.0.1'] });
    await expect(resolving('http://rebind.example/')).rejects.toThrow(
      /rebind\.example resolves to a loopback address/,
    );
    expect(target.seen).toEqual([]);
  });

  it('checks every redirect hop: an allowed host cannot lead elsewhere', async () => {
    const fetcher = policedFetch({ policy: new AddressPolicy(parseAllowList(hops.host)) });
    await expect(fetcher(`${hops.url}/to-target`)).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(fetcher(`${hops.url}/to-metadata`)).rejects.toThrow(/cloud metadata/);
    await expect(fetcher(`${hops.url}/to-file`)).rejects.toThrow(/scheme file: is not http\(s\)/);
    expect(target.seen).toEqual([]);
    // At most three redirects, followed by hand: /hop/4 answers, four hops away from /hop/0.
    await expect(fetcher(`${hops.url}/hop/0`)).rejects.toThrow(/fetch failed/);
    const three = await fetcher(`${hops.url}/hop/1`);
    expect(three.status).toBe(200);
    // A POST redirected by 302 goes on as GET without its body.
    const post = await fetcher(`${hops.url}/post`, { method: 'POST', body: new Uint8Array([1, 2]) });
    expect(await post.text()).toBe('ok');
    expect(hops.seen.slice(-2)).toEqual(['POST /post', 'GET /done']);
    // `redirect: 'error'` fails as Node's fetch does; `manual` hands the 3xx back.
    await expect(fetcher(`${hops.url}/post`, { method: 'POST', redirect: 'error' })).rejects.toMatchObject({
      cause: { message: 'unexpected redirect' },
    });
    expect((await fetcher(`${hops.url}/post`, { redirect: 'manual' })).status).toBe(302);
  });

  it('allowPrivate reaches loopback and private hosts, never cloud metadata', async () => {
    const fetcher = policedFetch({ allowPrivate: true });
    expect(await (await fetcher(`${target.url}/x`)).text()).toBe('secret');
    await expect(fetcher('http://169.254.169.254/')).rejects.toThrow(/cloud metadata/);
  });
});
