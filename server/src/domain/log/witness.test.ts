import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatAddCheckpoint, parseCosignerKey, verifyCosignatures } from '@notary/trust/cosignature';
import {
  ed25519KeyId,
  ed25519VerifierKey,
  formatCheckpoint,
  formatSignedNote,
  parseVerifierKey,
} from '@notary/trust/signed-note';
import { consistencyProof, treeRoot } from '@notary/trust/tlog';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test/harness/postgres';
import { fileCosigner } from '../../adapters/witness-key/file';
import { type Database, openDatabase } from '../../db';
import { TileSet } from './tiles';
import { Witness } from './witness';

/**
 * The witness on PostgreSQL: concurrent `add-checkpoint` requests from the same old size (the race C2SP
 * tlog-witness warns of) get exactly one cosignature, the others 409 with the size recorded, and the witness never
 * goes back; the cosignature carries the injected clock's time.
 */
describe('Witness', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  const logKey = generateKeyPairSync('ed25519').privateKey;
  const logPublic = new Uint8Array(
    Buffer.from(createPublicKey(logKey).export({ format: 'jwk' }).x ?? '', 'base64url'),
  );
  const origin = 'log.example/log';
  const tiles = new TileSet();
  tiles.appendEntries(
    0,
    Array.from({ length: 40 }, (_, i) => new TextEncoder().encode(`entry ${i}`)),
  );
  const noteOf = (size: number): string => {
    const text = formatCheckpoint({ origin, size, root: treeRoot(size, tiles.reader()), extensions: [] });
    const signature = new Uint8Array(sign(null, Buffer.from(text), logKey));
    return formatSignedNote({
      text,
      signatures: [{ name: origin, id: ed25519KeyId(origin, logPublic), signature }],
    });
  };
  const request = (oldSize: number, size: number): string =>
    formatAddCheckpoint({
      oldSize,
      proof: consistencyProof(oldSize, size, tiles.reader()),
      note: noteOf(size),
    });

  beforeAll(async () => {
    const pg = await createTestDatabase();
    db = await openDatabase({ databaseUrl: pg.url, dataDir: '' });
    drop = pg.drop;
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-witness-'));
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('cosigns one of concurrent requests from the same size, answers the others 409, and never goes back', async () => {
    const cosigner = await fileCosigner(path.join(dir, 'witness.pem'), 'witness.example/w');
    const witness = new Witness(
      () => db.fork(),
      cosigner,
      [parseVerifierKey(ed25519VerifierKey(origin, logPublic))],
      () => 1_800_000_000_500,
    );
    const first = await witness.addCheckpoint(request(0, 10));
    expect(first.status).toBe(200);
    if (first.status !== 200) return;
    const [cosignature] = await verifyCosignatures(noteOf(10) + first.cosignature, [
      parseCosignerKey(cosigner.verifierKey),
    ]);
    expect(cosignature?.timestamp).toBe(1_800_000_000);

    const answers = await Promise.all(
      [12, 20, 30, 15, 25].map((size) => witness.addCheckpoint(request(10, size))),
    );
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    const size = [12, 20, 30, 15, 25][answers.findIndex((a) => a.status === 200)] as number;
    expect(answers.filter((a) => a.status === 409)).toEqual(Array(4).fill({ status: 409, size }));
    // The older sizes, whoever asks: 409 with the size recorded; a smaller checkpoint from it is no proof (400).
    expect(await witness.addCheckpoint(request(10, 12))).toEqual({ status: 409, size });
    const smaller = formatAddCheckpoint({ oldSize: size, proof: [], note: noteOf(11) });
    expect((await witness.addCheckpoint(smaller)).status).toBe(400);
    expect((await witness.addCheckpoint(request(size, 40))).status).toBe(200);
  });
});
