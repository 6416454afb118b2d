import { createHash, generateKeyPairSync } from 'node:crypto';
import { toBase64 } from '@notary/trust/bytes';
import { verifyCheckpoint } from '@notary/trust/signed-note';
import {
  consistencyProof,
  HASH_SIZE,
  inclusionProof,
  leafHash,
  tileReader,
  treeRoot,
} from '@notary/trust/tlog';
import { testLogSigner } from '@notary/trust/tlog.testing';
import { encodeLeaf } from '@notary/trust/tlog-leaf';
import { describe, expect, it } from 'vitest';
import { checkAnchoredOnline, checkpointLeaf, isLastLeafPath } from './anchored-checkpoint.ts';
import { render } from './messages/index.ts';
import { parseReceipt, type Receipt, receiptVersionOf } from './receipt.ts';
import { checkLogProof, servedConsistency } from './transparency-log.ts';

/**
 * The log's checkpoint anchored with a receipt's batch, checked offline against hand-made logs and batches (a
 * document and the checkpoint as the batch's two leaves, or two documents and the checkpoint): the checkpoint is the
 * batch's last leaf, signed by the log key, and the receipt's leaf is in it or after it; each way of breaking that
 * fails with its message; online, the newest anchored checkpoint served is consistent, a fork, or unavailable.
 */

const ORIGIN = 'notary.test/log';
const log = testLogSigner(ORIGIN);
const VKEY = log.vkey;
const key = log.key;
const other = generateKeyPairSync('ed25519').privateKey;

const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bLeaf = (h: Uint8Array) => sha(Uint8Array.of(0), h);
const bNode = (l: Uint8Array, r: Uint8Array) => sha(Uint8Array.of(1), l, r);

const DOC = sha(new TextEncoder().encode('the notarized file'));
const entries = Array.from({ length: 40 }, (_, i) =>
  encodeLeaf({
    serial: `ABC-${i}`,
    sha256: i === 7 ? hex(DOC) : hex(sha(Uint8Array.of(i))),
    time: '2026-01-01T00:00:00.000Z',
    tenant: 'ab'.repeat(32),
  }),
);

/** The level-0 tile of the first `size` entries (fewer than 256) and the signed checkpoint of that tree. */
function logOf(list: Uint8Array[], size: number, signer = log.privateKey) {
  const tile = new Uint8Array(size * HASH_SIZE);
  list.slice(0, size).forEach((e, i) => {
    tile.set(leafHash(e), i * HASH_SIZE);
  });
  const read = tileReader((level, index) => (level === 0 && index === 0 ? tile : new Uint8Array(0)));
  const root = treeRoot(size, read);
  const note = log.signCheckpoint(size, root, signer);
  return { tile, read, root, note };
}

/** A receipt of document 7 with its leaf proven at `receiptSize` and the checkpoint of `anchoredSize` anchored. */
async function receiptWith(
  anchoredSize: number,
  receiptSize: number,
  legs: 'registered' | 'pending' = 'registered',
) {
  const anchoredLog = logOf(entries, anchoredSize);
  const now = logOf(entries, receiptSize);
  const cp = new Uint8Array(Buffer.from(await checkpointLeaf(anchoredLog.note), 'hex'));
  const otherDoc = sha(Uint8Array.of(99));
  // Three leaves: the document, another, the checkpoint last (promoted, then paired on the right).
  const pair = bNode(bLeaf(DOC), bLeaf(otherDoc));
  const root = hex(bNode(pair, bLeaf(cp)));
  const link =
    7 < anchoredSize
      ? { kind: 'inclusion' as const, proof: inclusionProof(7, anchoredSize, now.read).map(toBase64) }
      : {
          kind: 'consistency' as const,
          proof: consistencyProof(anchoredSize, receiptSize, now.read).map(toBase64),
        };
  const registered = legs === 'registered';
  const receipt = parseReceipt({
    format: 'notary-receipt',
    version: 4,
    service: { name: 'Notary', url: 'http://log.test' },
    document: {
      id: 'doc-7',
      serialNumber: 'ABC-7',
      sha256: hex(DOC),
      fileName: 'f.bin',
      fileSize: 18,
      mimeType: 'application/octet-stream',
      registeredAt: '2026-01-01T00:00:00.000Z',
    },
    merkle: {
      hashing: 'sha256-rfc6962',
      leafIndex: 0,
      leafCount: 3,
      siblings: [
        { position: 'right', hash: hex(bLeaf(otherDoc)) },
        { position: 'right', hash: hex(bLeaf(cp)) },
      ],
      root,
    },
    evm: registered
      ? null
      : {
          status: 'pending',
          network: 'hardhat',
          chainId: 31337,
          schema: 'bytes32 merkleRoot',
          schemaUid: `0x${'11'.repeat(32)}`,
          easAddress: null,
          schemaRegistryAddress: null,
        },
    stacks: registered
      ? {
          status: 'registered',
          network: 'devnet',
          contractId: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
          txId: `0x${'22'.repeat(32)}`,
          blockHeight: 5,
          anchoredAt: '2026-01-01T00:00:05.000Z',
        }
      : null,
    timestamp: null,
    transparencyLog: {
      origin: ORIGIN,
      url: 'http://log.test/log',
      verifierKey: VKEY,
      leafIndex: 7,
      entry: toBase64(entries[7] as Uint8Array),
      inclusionProof: inclusionProof(7, receiptSize, now.read).map(toBase64),
      checkpoint: now.note,
      anchored: {
        checkpoint: anchoredLog.note,
        batchRoot: root,
        leafIndex: 2,
        siblings: [{ position: 'left', hash: hex(pair) }],
        link,
      },
    },
  });
  return receipt;
}

const anchoredOf = (r: Receipt) => {
  const a = r.transparencyLog?.anchored;
  if (!a) throw new Error('no anchored checkpoint');
  return a;
};

describe('the anchored checkpoint, offline', () => {
  it('passes with the receipt leaf in the anchored tree, and with the receipt checkpoint extending it', async () => {
    const inside = await receiptWith(20, 30);
    expect(receiptVersionOf(inside)).toBe(4);
    const report = await checkLogProof(inside, [VKEY]);
    expect(report).toMatchObject({
      status: 'passed',
      anchored: { status: 'passed', size: 20, link: 'inclusion', anchoredOn: ['stacks'], problems: [] },
    });
    expect(report?.anchored?.summary).toBe(
      `anchored checkpoint: 20 leaves, the last leaf of batch root ${inside.merkle?.root}, anchored on stacks (checks 3 and 4 judge the root on each chain); the receipt's leaf 7 is in it`,
    );
    expect(render(report?.anchored?.summaryMessage ?? { code: 'data', params: { value: '' } }, 'pt')).toMatch(
      /^checkpoint ancorado: 20 folhas, .* ancorada em stacks .*; a folha 7 do recibo está nele$/,
    );
    const after = await receiptWith(5, 30);
    expect((await checkLogProof(after, [VKEY]))?.anchored).toMatchObject({
      status: 'passed',
      link: 'consistency',
      summary: expect.stringContaining("the receipt's checkpoint (30 leaves) extends it"),
    });
  });

  it('is pending, not failed, while no chain leg of the receipt is registered', async () => {
    const report = await checkLogProof(await receiptWith(20, 30, 'pending'), [VKEY]);
    expect(report).toMatchObject({ status: 'passed', anchored: { status: 'pending', anchoredOn: [] } });
    expect(report?.anchored?.summary).toContain('not on a chain yet');
  });

  it('fails a checkpoint the log key did not sign, one that is not the last leaf, another root, a broken link', async () => {
    const problemsOf = async (r: Receipt) => {
      const report = await checkLogProof(r, [VKEY]);
      expect(report?.status).toBe('failed');
      return report?.anchored?.problemMessages.map((m) => m.code);
    };
    const unsigned = await receiptWith(20, 30);
    anchoredOf(unsigned).checkpoint = logOf(entries, 20, other).note;
    expect(await problemsOf(unsigned)).toEqual(['log.anchored.signature']);

    // The document's own place claimed for the checkpoint: not the last leaf.
    const moved = await receiptWith(20, 30);
    Object.assign(anchoredOf(moved), { leafIndex: 0, siblings: moved.merkle?.siblings });
    expect(await problemsOf(moved)).toEqual(['log.anchored.notInBatch']);

    const rooted = await receiptWith(20, 30);
    anchoredOf(rooted).batchRoot = 'cd'.repeat(32);
    expect(await problemsOf(rooted)).toEqual(['log.anchored.otherRoot']);

    const unlinked = await receiptWith(20, 30);
    const link = anchoredOf(unlinked).link;
    link.proof = link.proof.slice(1);
    expect(await problemsOf(unlinked)).toEqual(['log.anchored.notIncluded']);

    const unextended = await receiptWith(5, 30);
    const rewritten = logOf(
      entries.map((e, i) => (i === 2 ? new TextEncoder().encode('forged') : e)),
      5,
    );
    // A checkpoint of another history of 5 leaves, signed and in the batch: the receipt's tree does not extend it.
    const cp = new Uint8Array(Buffer.from(await checkpointLeaf(rewritten.note), 'hex'));
    const pair = anchoredOf(unextended).siblings[0]?.hash ?? '';
    const root = hex(bNode(new Uint8Array(Buffer.from(pair, 'hex')), bLeaf(cp)));
    Object.assign(anchoredOf(unextended), { checkpoint: rewritten.note, batchRoot: root });
    if (unextended.merkle) {
      unextended.merkle.root = root;
      const last = unextended.merkle.siblings[1];
      if (last) last.hash = hex(bLeaf(cp));
    }
    expect(await problemsOf(unextended)).toEqual(['log.anchored.notExtended']);
  });

  it('is version 4; the same receipt without it is version 3 and verifies its log leaf as before', async () => {
    const full = await receiptWith(20, 30);
    const { anchored: _, ...block } = full.transparencyLog ?? ({} as NonNullable<Receipt['transparencyLog']>);
    const older = parseReceipt({ ...full, version: 3, transparencyLog: block });
    expect([receiptVersionOf(full), receiptVersionOf(older)]).toEqual([4, 3]);
    const report = await checkLogProof(older, [VKEY]);
    expect(report).toMatchObject({ status: 'passed', treeSize: 30 });
    expect(report?.anchored).toBeUndefined();
  });

  it('takes the last leaf as the path with every sibling on the left', () => {
    expect(isLastLeafPath([])).toBe(true);
    expect(isLastLeafPath([{ position: 'left' }, { position: 'left' }])).toBe(true);
    expect(isLastLeafPath([{ position: 'left' }, { position: 'right' }])).toBe(false);
  });
});

describe('the anchored checkpoint, online', () => {
  /** A fetch serving `<log>/anchored` for `served` and the level-0 tile of `list` at `size`. */
  const fetchOf = (served: object | undefined, list: Uint8Array[], size: number): typeof fetch =>
    (async (input: string | URL | Request) => {
      const url = String(input);
      if (url === 'http://log.test/log/anchored') {
        return served ? new Response(JSON.stringify(served)) : new Response(null, { status: 404 });
      }
      if (url === `http://log.test/log/tile/0/000.p/${size}`) return new Response(logOf(list, size).tile);
      return new Response(null, { status: 404 });
    }) as typeof fetch;

  /** What `/log/anchored` serves for the checkpoint of `size` leaves of `list`, the last of a two-leaf batch. */
  const servedOf = async (list: Uint8Array[], size: number) => {
    const { note } = logOf(list, size);
    const doc = bLeaf(sha(Uint8Array.of(1)));
    const cp = new Uint8Array(Buffer.from(await checkpointLeaf(note), 'hex'));
    return {
      checkpoint: note,
      batchRoot: hex(bNode(doc, bLeaf(cp))),
      leafIndex: 1,
      siblings: [{ position: 'left', hash: hex(doc) }],
      anchors: [{ chain: 'evm', txHash: `0x${'33'.repeat(32)}`, status: 'confirmed' }],
    };
  };

  it('finds the newest anchored checkpoint consistent, a rewritten one a fork, and a missing one unavailable', async () => {
    const anchored = {
      checkpoint: await verifyCheckpoint(logOf(entries, 20).note, key),
      note: logOf(entries, 20).note,
    };
    const online = (f: typeof fetch) => ({ fetch: f, consistent: servedConsistency });
    const newer = await checkAnchoredOnline(
      online(fetchOf(await servedOf(entries, 35), entries, 35)),
      'http://log.test/log',
      key,
      anchored,
    );
    expect(newer).toMatchObject({
      status: 'consistent',
      servedSize: 35,
      url: 'http://log.test/log/anchored',
    });
    expect(newer.reason).toContain('extends the one anchored with the receipt (20 leaves): consistent');

    const forged = entries.map((e, i) => (i === 3 ? new TextEncoder().encode('forged') : e));
    const fork = await checkAnchoredOnline(
      online(fetchOf(await servedOf(forged, 35), forged, 35)),
      'http://log.test/log',
      key,
      anchored,
    );
    expect(fork).toMatchObject({
      status: 'fork',
      reasonMessage: { code: 'log.anchored.online.fork' },
      evidence: { receipt: anchored.note, served: logOf(forged, 35).note },
    });
    const older = await checkAnchoredOnline(
      online(fetchOf(await servedOf(entries, 10), entries, 10)),
      'http://log.test/log',
      key,
      anchored,
    );
    expect(older.status).toBe('fork');

    const none = await checkAnchoredOnline(
      online(fetchOf(undefined, entries, 35)),
      'http://log.test/log',
      key,
      anchored,
    );
    expect(none).toMatchObject({ status: 'unavailable', servedSize: null });
    expect(none.reason).toContain('HTTP 404');
    // A checkpoint that is not the last leaf of the root it names is not taken for an anchored one.
    const misplaced = {
      ...(await servedOf(entries, 35)),
      siblings: [{ position: 'right', hash: 'ab'.repeat(32) }],
    };
    expect(
      (
        await checkAnchoredOnline(
          online(fetchOf(misplaced, entries, 35)),
          'http://log.test/log',
          key,
          anchored,
        )
      ).status,
    ).toBe('unavailable');
  });

  it('is part of the log report with --online: a fork fails the receipt', async () => {
    const receipt = await receiptWith(20, 30);
    const forged = entries.map((e, i) => (i === 3 ? new TextEncoder().encode('forged') : e));
    const served = await servedOf(forged, 35);
    const f = (async (input: string | URL | Request) => {
      const url = String(input);
      if (url === 'http://log.test/log/checkpoint') return new Response(logOf(entries, 30).note);
      if (url === 'http://log.test/log/tile/0/000.p/30') return new Response(logOf(entries, 30).tile);
      return fetchOf(served, forged, 35)(input);
    }) as typeof fetch;
    const report = await checkLogProof(receipt, [VKEY], { keys: [] }, { fetch: f });
    expect(report).toMatchObject({
      status: 'failed',
      online: { status: 'consistent' },
      anchored: { status: 'passed', online: { status: 'fork' } },
    });
  });
});
