import {
  Cl,
  cvToString,
  hexToCV,
  makeContractCall,
  PostConditionMode,
  serializeCV,
} from '@stacks/transactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StacksDevnet, startStacksDevnet } from './stacks-devnet.js';

/** Drives the devnet with raw HTTP, as a client of a Stacks node would. */
describe('Stacks devnet (Clarity VM behind the node API)', () => {
  let dev: StacksDevnet;
  beforeAll(async () => {
    dev = await startStacksDevnet({ blockTimeMs: 0 });
  });
  afterAll(async () => {
    await dev.stop();
  });

  async function signed(arg: ReturnType<typeof Cl.buffer>, nonce: number, fee = 1000) {
    const [contractAddress = '', contractName = ''] = dev.contractId.split('.');
    return makeContractCall({
      contractAddress,
      contractName,
      functionName: 'anchor',
      functionArgs: [arg],
      senderKey: dev.senderKey,
      nonce,
      fee,
      network: 'devnet',
      postConditionMode: PostConditionMode.Deny,
    });
  }

  async function post(raw: Uint8Array) {
    const res = await fetch(`${dev.url}/v2/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from(raw),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  }

  it('serves /v2/info, /v2/accounts and /v2/fees/transfer', async () => {
    const info = (await (await fetch(`${dev.url}/v2/info`)).json()) as Record<string, unknown>;
    expect(info.network_id).toBe(0x80000000);
    expect(typeof info.stacks_tip_height).toBe('number');
    const acc = (await (await fetch(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`)).json()) as {
      nonce: number;
      balance: string;
    };
    expect(acc.nonce).toBe(0);
    expect(BigInt(acc.balance)).toBeGreaterThan(0n);
    expect(await (await fetch(`${dev.url}/v2/fees/transfer`)).json()).toBe(1);
  });

  it('answers CORS like the public Stacks APIs (the web verify page reads it from a browser)', async () => {
    const preflight = await fetch(
      `${dev.url}/v2/contracts/call-read/${dev.contractId.replace('.', '/')}/get-anchor`,
      {
        method: 'OPTIONS',
        headers: {
          origin: 'http://127.0.0.1:3000',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      },
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('content-type');
    const info = await fetch(`${dev.url}/v2/info`, { headers: { origin: 'http://127.0.0.1:3000' } });
    expect(info.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('mines a contract call, records the root and reads it back with call-read', async () => {
    const root = 'cd'.repeat(32);
    const tx = await signed(Cl.bufferFromHex(root), 0);
    const sent = await post(tx.serializeBytes());
    expect(sent).toEqual({ status: 200, body: tx.txid() });
    expect(await post(tx.serializeBytes())).toEqual({ status: 200, body: tx.txid() }); // re-post is idempotent
    const pending = (await (await fetch(`${dev.url}/extended/v1/tx/0x${tx.txid()}`)).json()) as Record<
      string,
      unknown
    >;
    expect(pending.tx_status).toBe('pending');
    const tip = dev.mine();
    const done = (await (await fetch(`${dev.url}/extended/v1/tx/0x${tx.txid()}`)).json()) as {
      tx_status: string;
      block_height: number;
      tx_result: { repr: string };
    };
    expect(done.tx_status).toBe('success');
    expect(done.block_height).toBe(tip);
    expect(done.tx_result.repr).toContain(`(root 0x${root})`);
    const [a, n] = dev.contractId.split('.');
    const read = (await (
      await fetch(`${dev.url}/v2/contracts/call-read/${a}/${n}/get-anchor`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sender: dev.senderAddress,
          arguments: [`0x${serializeCV(Cl.bufferFromHex(root))}`],
        }),
      })
    ).json()) as { okay: boolean; result: string };
    expect(read.okay).toBe(true);
    expect(cvToString(hexToCV(read.result))).toBe(
      `(some (tuple (height u${tip}) (sender ${dev.senderAddress})))`,
    );
    const nonces = (await (
      await fetch(`${dev.url}/extended/v1/address/${dev.senderAddress}/nonces`)
    ).json()) as {
      possible_next_nonce: number;
    };
    expect(nonces.possible_next_nonce).toBe(1);
  });

  it('rejects like stacks-core: BadNonce, ConflictingNonceInMempool, FeeTooLow, NotEnoughFunds, BadFunctionArgument', async () => {
    const stale = await signed(Cl.bufferFromHex('01'.repeat(32)), 0);
    const r1 = await post(stale.serializeBytes());
    expect(r1.status).toBe(400);
    expect(r1.body).toMatchObject({
      reason: 'BadNonce',
      reason_data: { expected: 1, actual: 0 },
      txid: stale.txid(),
    });

    const first = await signed(Cl.bufferFromHex('02'.repeat(32)), 1, 1000);
    expect((await post(first.serializeBytes())).status).toBe(200);
    const same = await signed(Cl.bufferFromHex('03'.repeat(32)), 1, 1000);
    expect((await post(same.serializeBytes())).body).toMatchObject({ reason: 'ConflictingNonceInMempool' });

    const cheap = await signed(Cl.bufferFromHex('04'.repeat(32)), 2, 1);
    expect((await post(cheap.serializeBytes())).body).toMatchObject({ reason: 'FeeTooLow' });

    const rich = await signed(Cl.bufferFromHex('05'.repeat(32)), 2, 10 ** 15);
    expect((await post(rich.serializeBytes())).body).toMatchObject({ reason: 'NotEnoughFunds' });

    const long = await signed(Cl.bufferFromHex('06'.repeat(33)), 2);
    const r5 = await post(long.serializeBytes());
    expect(r5.status).toBe(400);
    expect(r5.body).toMatchObject({ reason: 'BadFunctionArgument' });
    dev.mine();
  });
});

describe('Stacks devnet automatic miner', () => {
  it('includes a broadcast transaction and grows the tip without mine()', async () => {
    const dev = await startStacksDevnet({ blockTimeMs: 50 });
    try {
      const [contractAddress = '', contractName = ''] = dev.contractId.split('.');
      const tx = await makeContractCall({
        contractAddress,
        contractName,
        functionName: 'anchor',
        functionArgs: [Cl.bufferFromHex('77'.repeat(32))],
        senderKey: dev.senderKey,
        nonce: 0,
        fee: 1000,
        network: 'devnet',
        postConditionMode: PostConditionMode.Deny,
      });
      await fetch(`${dev.url}/v2/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from(tx.serializeBytes()),
      });
      const started = Date.now();
      let status = 'pending';
      while (status === 'pending' && Date.now() - started < 5000) {
        await new Promise((r) => setTimeout(r, 25));
        const body = (await (await fetch(`${dev.url}/extended/v1/tx/${tx.txid()}`)).json()) as {
          tx_status: string;
        };
        status = body.tx_status;
      }
      expect(status).toBe('success');
      const info = (await (await fetch(`${dev.url}/v2/info`)).json()) as { stacks_tip_height: number };
      await new Promise((r) => setTimeout(r, 200));
      const later = (await (await fetch(`${dev.url}/v2/info`)).json()) as { stacks_tip_height: number };
      expect(later.stacks_tip_height).toBeGreaterThan(info.stacks_tip_height);
    } finally {
      await dev.stop();
    }
  });
});
