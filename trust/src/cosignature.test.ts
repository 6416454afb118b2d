import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  COSIGNATURE_V1_TYPE,
  cosignatureMessage,
  formatAddCheckpoint,
  parseAddCheckpoint,
  parseCosignerKey,
  timestampedSignature,
  verifyCosignatures,
} from './cosignature.ts';
import { ed25519KeyId, ed25519VerifierKey, formatCheckpoint, signatureLine } from './signed-note.ts';

function keyPair(name: string, type: number) {
  const { privateKey } = generateKeyPairSync('ed25519');
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x ?? '';
  const publicKey = new Uint8Array(Buffer.from(x, 'base64url'));
  return {
    vkey: ed25519VerifierKey(name, publicKey, type),
    id: ed25519KeyId(name, publicKey, type),
    sign: (m: Uint8Array) => new Uint8Array(sign(null, m, privateKey)),
  };
}

const text = formatCheckpoint({
  origin: 'a.example/log',
  size: 5,
  root: new Uint8Array(32).fill(7),
  extensions: [],
});

function cosignatureLine(w: ReturnType<typeof keyPair>, name: string, time: number, signed = text): string {
  const sig = timestampedSignature(time, w.sign(cosignatureMessage(signed, time)));
  return signatureLine({ name, id: w.id, signature: sig });
}

describe('cosignature/v1 (C2SP tlog-cosignature)', () => {
  const log = keyPair('a.example/log', 0x01);
  const logLine = signatureLine({
    name: 'a.example/log',
    id: log.id,
    signature: log.sign(new TextEncoder().encode(text)),
  });
  const w1 = keyPair('w1.example/witness', COSIGNATURE_V1_TYPE);
  const w2 = keyPair('w2.example/witness', COSIGNATURE_V1_TYPE);

  it('verifies the cosignatures of the keys given, ignoring the log line and unknown witnesses', async () => {
    const note = `${text}\n${logLine}${cosignatureLine(w1, 'w1.example/witness', 1_700_000_000)}${cosignatureLine(w2, 'w2.example/witness', 1_700_000_001)}`;
    const got = await verifyCosignatures(note, [parseCosignerKey(w1.vkey)]);
    expect(got.map((c) => [c.name, c.timestamp])).toEqual([['w1.example/witness', 1_700_000_000]]);
    expect(note).toContain(got[0]?.line);
    expect(
      await verifyCosignatures(note, [parseCosignerKey(w1.vkey), parseCosignerKey(w2.vkey)]),
    ).toHaveLength(2);
  });

  it('refuses a cosignature of another checkpoint, of time zero, or a note key as a witness key', async () => {
    const other = formatCheckpoint({
      origin: 'a.example/log',
      size: 6,
      root: new Uint8Array(32),
      extensions: [],
    });
    const forged = `${text}\n${logLine}${cosignatureLine(w1, 'w1.example/witness', 5, other)}`;
    await expect(verifyCosignatures(forged, [parseCosignerKey(w1.vkey)])).rejects.toThrow(/does not verify/);
    const zero = `${text}\n${logLine}${cosignatureLine(w1, 'w1.example/witness', 0)}`;
    await expect(verifyCosignatures(zero, [parseCosignerKey(w1.vkey)])).rejects.toThrow(/no time/);
    expect(() => parseCosignerKey(log.vkey)).toThrow(/type 0x04/);
    // A witness key of another name: its lines do not match, nothing verifies.
    const renamed = `${text}\n${logLine}${cosignatureLine(w1, 'w9.example/witness', 5)}`;
    expect(await verifyCosignatures(renamed, [parseCosignerKey(w1.vkey)])).toEqual([]);
  });

  it('formats and parses add-checkpoint bodies, refusing malformed ones', () => {
    const note = `${text}\n${logLine}`;
    const proof = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)];
    const body = formatAddCheckpoint({ oldSize: 3, proof, note });
    expect(body.startsWith('old 3\n')).toBe(true);
    expect(parseAddCheckpoint(body)).toEqual({ oldSize: 3, proof, note });
    expect(parseAddCheckpoint(`old 0\n\n${note}`)).toEqual({ oldSize: 0, proof: [], note });
    expect(() => parseAddCheckpoint(`old 03\n\n${note}`)).toThrow(/old <size>/);
    expect(() => parseAddCheckpoint(`old 3\nAAAA\n\n${note}`)).toThrow(/SHA-256/);
    expect(() => parseAddCheckpoint(note)).toThrow();
    const long = formatAddCheckpoint({
      oldSize: 3,
      proof: Array.from({ length: 64 }, () => proof[0] as Uint8Array),
      note,
    });
    expect(() => parseAddCheckpoint(long)).toThrow(/63/);
  });
});
