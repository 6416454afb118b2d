import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { recordingLog } from '@notary/platform/log.testing';
import { afterAll, describe, expect, it } from 'vitest';
import { type AnchoringChains, startChains } from '../adapters/chains';
import { openMemoryOrm } from '../db/memory-orm.testing';
import { type AnchoringRunner, startAnchoring } from './anchoring';

/**
 * `ANCHORING=devnet` as the service's start runs it (the chains of the registry, then the runner): neither
 * devnet is started by it, so an idle service holds neither; the EVM chain's first read starts its devnet, which
 * is then ready to anchor on (EAS where announced, the notary schema registered).
 */

let orm: PgliteORM | undefined;
let chains: AnchoringChains | undefined;
let runner: AnchoringRunner | undefined;
afterAll(async () => {
  await runner?.stop();
  await chains?.stop();
  await orm?.close();
});

describe('the devnets of ANCHORING=devnet start on first use', () => {
  it('the start and an empty collection start neither; the EVM chain’s first read starts the EVM devnet alone', async () => {
    orm = await openMemoryOrm();
    const db = orm;
    const log = recordingLog();
    const config = {
      mode: 'devnet',
      batchSeconds: 3600,
      batchMax: 5,
      evmConfirmations: 1,
      stacksConfirmations: 1,
    } as const;
    chains = await startChains(config);
    runner = await startAnchoring({ config, chains: chains.entries, fork: () => db.em.fork(), log });
    const devnets = chains.devnets;
    if (!devnets) throw new Error('no devnets');
    expect(await runner.triggerCollection()).toMatchObject({ batched: 0, pending: 0 });
    expect(runner.chains.map((c) => c.kind)).toEqual(['evm', 'stacks']);
    expect(devnets.evm.started()).toBe(false);
    expect(devnets.stacks.started()).toBe(false);

    // The first read the EVM worker makes for a batch (its nonce) waits for the start: SchemaRegistry, EAS and
    // the schema's registration took the funder's nonces 0 to 2.
    const evm = runner.chains[0];
    expect(await evm?.chainNonce()).toBe(3n);
    expect(devnets.evm.started()).toBe(true);
    expect(devnets.stacks.started()).toBe(false);
    expect(log.texts('error')).toEqual([]);
  }, 120_000);
});
