import { createLogger } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../../test/bench/lib';
import { BlockSource } from './blocks';
import { RAW } from './cid';

/**
 * A gateway URL's key (a pinning service's token in a path segment, a matrix or query parameter, the userinfo
 * or an account subdomain) never reaches the BAD_GATEWAY message told to the client nor its log line: every
 * gateway refuses connections (or does not resolve), so the message names each one's failure.
 */

describe('BlockSource: gateway failures redacted of every piece of the gateway URLs', () => {
  it('names each failed gateway without its key', async () => {
    const base = `http://127.0.0.1:${await freePort()}`;
    const gateways = [
      `${base}/hushkey`,
      `${base}/v1/s%C3%A9cr%C3%A9t`,
      `${base}/gw;apikey=mk1`,
      base.replace('://', '://operator:pw4u@'),
      `${base}/gw?token=qv9`,
      'http://acct7781.gateway.invalid',
    ];
    const secrets = ['hushkey', 'sécrét', 's%C3%A9cr%C3%A9t', 'mk1', 'operator', 'pw4u', 'qv9', 'acct7781'];
    const cid = CID.create(1, RAW, await sha256.digest(new TextEncoder().encode('redaction')));
    const source = new BlockSource({ gateways, timeoutMs: 5_000 });
    const error = await source.get(cid, new AbortController().signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    const failure = error as AppError;
    expect(failure.code).toBe('BAD_GATEWAY');
    expect(failure.message).toContain(`IPFS gateway failure for block ${cid}`);
    expect(failure.message.match(/unreachable|no complete answer/g)).toHaveLength(gateways.length);
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      format: 'json',
      destination: { write: (l: string) => lines.push(l) },
    });
    log.error({ err: failure }, 'import failed');
    const told = [failure.message, failure.stack ?? '', ...lines].join('\n');
    for (const secret of secrets) expect(told).not.toContain(secret);
  });
});
