import { createLogger } from '@notary/platform/log';
import type { ErrorBody } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

type Line = Record<string, unknown>;

/**
 * Every line a request causes carries its request id, procedures included: the domain code a procedure calls
 * logs through the request's logger (`ctx.log`), not the service's root one. A capture refused by the disk
 * floor warns from the domain (`disk-floor.ts`); its line and the access log line share the `reqId` the answer
 * names in `X-Request-Id`, on the REST face and on `/trpc`.
 */
describe('the request id in the lines of a procedure', () => {
  const lines: Line[] = [];
  let t: TestService;
  let token: string;

  beforeAll(async () => {
    const log = createLogger({
      level: 'info',
      format: 'json',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
    });
    t = await startTestService('pglite', { DISK_FREE_FLOOR_BYTES: String(1024 ** 2) }, { log });
    token = await t.token(freshEmail('reqid'));
    // No room on any volume: the capture is refused before the browser is asked.
    t.service.deps.freeSpace = { freeBytes: async () => 0 };
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The lines of request `reqId`, once its access line (written when the response closes) is there. */
  async function linesOf(reqId: string, access: string): Promise<Line[]> {
    const deadline = Date.now() + 30_000;
    while (!lines.some((l) => l.reqId === reqId && l.msg === access)) {
      if (Date.now() > deadline) throw new Error(`no access line ${access} for ${reqId}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return lines.filter((l) => l.reqId === reqId);
  }

  it('REST: the disk floor warning of POST /api/documents/capture has the request id of its access line', async () => {
    const res = await api<ErrorBody>(t.url, '/api/documents/capture', {
      method: 'POST',
      token,
      body: { url: 'http://example.test/', consent: true },
    });
    expect(res.status).toBe(507);
    const reqId = res.headers.get('x-request-id') ?? '';
    expect(reqId).not.toBe('');
    const mine = await linesOf(reqId, 'POST /api/documents/capture 507');
    expect(mine.map((l) => l.msg)).toEqual([
      'free space below DISK_FREE_FLOOR_BYTES: intake refused',
      'POST /api/documents/capture 507',
    ]);
    expect(mine[0]).toMatchObject({ level: 40, volume: 'data', freeBytes: 0 });
  });

  it('tRPC: the same through /trpc/documents.capture', async () => {
    const res = await api(t.url, '/trpc/documents.capture', {
      method: 'POST',
      token,
      body: { url: 'http://example.test/', consent: true },
    });
    expect(res.status).toBe(507);
    const reqId = res.headers.get('x-request-id') ?? '';
    const mine = await linesOf(reqId, 'POST /trpc/documents.capture 507');
    expect(mine.map((l) => l.msg)).toEqual([
      'free space below DISK_FREE_FLOOR_BYTES: intake refused',
      'POST /trpc/documents.capture 507',
    ]);
  });

  it('a call without HTTP (createCaller) logs with a generated request id', async () => {
    const { createInnerContext } = await import('@notary/server/trpc/context');
    const a = createInnerContext(t.service.deps);
    const b = createInnerContext(t.service.deps);
    a.log.warn({ probe: 1 }, 'probe');
    b.log.warn({ probe: 2 }, 'probe');
    const probes = lines.filter((l) => l.msg === 'probe');
    expect(probes).toHaveLength(2);
    expect(typeof probes[0]?.reqId).toBe('string');
    expect(probes[0]?.reqId).not.toBe(probes[1]?.reqId);
    expect(probes[0]).toMatchObject({ module: 'trpc' });
  });
});
