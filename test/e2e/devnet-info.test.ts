import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@notary/platform/log';
import { type Service, startService } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The devnets' endpoints, where receipts are checked without the service: printed at start one per line
 * (`evm-rpc <url>`, `stacks-api <url>`) even at `LOG_LEVEL=warn`, and by `npm run notary -- devnet:info` from another
 * process while the service runs; both answer their APIs (`eth_chainId`, the Stacks node's `/v2/info` and `call-read`).
 */
describe('devnet endpoints at start and by devnet:info', () => {
  let dataDir: string;
  let service: Service | undefined;
  afterAll(async () => {
    await service?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('prints, records and forgets them with the service', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-devnet-info-'));
    const env = { NODE_ENV: 'test', DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMITS: 'off' } as const;
    const lines: string[] = [];
    const log = createLogger({
      level: 'warn',
      format: 'json',
      destination: { write: (line: string) => void lines.push(String(JSON.parse(line).msg)) },
    });
    service = await startService(loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', ANCHORING: 'devnet' }), {
      log,
    });
    const devnets = service.anchoring?.devnets;
    if (!devnets) throw new Error('no devnets');
    const expected = [`evm-rpc ${devnets.evm.rpcUrl}`, `stacks-api ${devnets.stacks.url}`];
    expect(lines).toEqual(expect.arrayContaining(expected));
    // Announced and listening, yet neither devnet has started: the service's start, its health and its chain
    // info touch neither (they start on their first use: here the CLI's probe).
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
    const onchain = await fetch(`${service.url}/api/onchain/info`);
    expect(await onchain.text()).toContain(devnets.evm.rpcUrl);
    expect([devnets.evm.started(), devnets.stacks.started()]).toEqual([false, false]);

    const cli = (...args: string[]) =>
      promisify(execFile)(
        path.resolve('node_modules/.bin/node'),
        ['--import', 'tsx', path.resolve('server/src/cli/main.ts'), ...args],
        { env: { ...process.env, ...env } },
      );
    const { stdout } = await cli('devnet:info');
    expect(stdout).toBe(`${expected.join('\n')}\n`);
    expect([devnets.evm.started(), devnets.stacks.started()]).toEqual([true, true]);

    // They serve the interfaces notary-verify uses.
    const [evm, stacks] = stdout
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '');
    const chainId = await fetch(evm ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    });
    expect(((await chainId.json()) as { result: string }).result).toBe('0x7a69');
    const info = (await (await fetch(`${stacks}/v2/info`)).json()) as { network_id: number };
    expect(info.network_id).toBe(0x80000000);

    await service.close();
    service = undefined;
    const stopped = await cli('devnet:info').catch((e: { code?: number; stderr?: string }) => e);
    expect(stopped).toMatchObject({ code: 1 });
    expect((stopped as { stderr?: string }).stderr).toMatch(/no devnet runs on DATA_DIR/);
    // Two service starts with devnets and the CLI: minutes on a loaded 2-core machine, never a timing assertion.
  }, 180_000);
});
