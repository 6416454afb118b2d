import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EVM_DEVNET_FIRST_ANSWER_MS, STACKS_DEVNET_FIRST_ANSWER_MS } from '../config/anchoring';

/**
 * The devnets' public endpoints: with `ANCHORING=devnet` the in-process EVM node's JSON-RPC and the loopback Stacks API
 * (node `/v2` routes with `call-read`, Hiro `/extended/v1/tx`) serve the same interfaces a real network does, so
 * `notary-verify` and a newcomer can use them. The service prints them at start, one per line (`evm-rpc <url>`,
 * `stacks-api <url>`), and records them in `DATA_DIR/devnet-endpoints` while it runs, where
 * `npm run notary -- devnet:info` reads them (whatever the database: no database is opened).
 */

/** File of the running service's devnet endpoints, in its data directory. */
export const DEVNET_ENDPOINTS_FILE = 'devnet-endpoints';

/** The lines printed and recorded: `evm-rpc <url>` then `stacks-api <url>`. */
export function devnetEndpointLines(devnets: { evm: { rpcUrl: string }; stacks: { url: string } }): string[] {
  return [`evm-rpc ${devnets.evm.rpcUrl}`, `stacks-api ${devnets.stacks.url}`];
}

/** Records `lines` for `devnet:info` (mode 0600: the data directory is private anyway). */
export async function recordDevnetEndpoints(dataDir: string, lines: string[]): Promise<void> {
  await writeFile(path.join(dataDir, DEVNET_ENDPOINTS_FILE), `${lines.join('\n')}\n`, { mode: 0o600 });
}

/** Removes the record (the devnets stop with the service). */
export async function forgetDevnetEndpoints(dataDir: string): Promise<void> {
  await rm(path.join(dataDir, DEVNET_ENDPOINTS_FILE), { force: true });
}

/**
 * `devnet:info`: the recorded endpoint lines, once each endpoint answered (`eth_chainId`, `GET /v2/info`), so a
 * record left by a service that died is not printed as live.
 * @throws Error when no service with `ANCHORING=devnet` runs on `dataDir`, or its endpoints do not answer.
 */
export async function devnetInfo(dataDir: string, fetchFn: typeof fetch = fetch): Promise<string> {
  let text: string;
  try {
    text = await readFile(path.join(dataDir, DEVNET_ENDPOINTS_FILE), 'utf8');
  } catch {
    throw new Error(
      `no devnet runs on DATA_DIR ${dataDir}: start the service with ANCHORING=devnet (the default of npm start)`,
    );
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  for (const line of lines) {
    const [kind, url] = line.split(' ');
    // Both devnets start on their first request: this probe may be that request.
    const probe =
      kind === 'evm-rpc'
        ? fetchFn(url ?? '', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
            signal: AbortSignal.timeout(EVM_DEVNET_FIRST_ANSWER_MS),
          })
        : fetchFn(`${url}/v2/info`, { signal: AbortSignal.timeout(STACKS_DEVNET_FIRST_ANSWER_MS) });
    const ok = await probe.then(
      async (res) => {
        await res.body?.cancel();
        return res.ok;
      },
      () => false,
    );
    if (!ok)
      throw new Error(`the devnet recorded in ${DEVNET_ENDPOINTS_FILE} does not answer at ${url} (stopped?)`);
  }
  return `${lines.join('\n')}\n`;
}
