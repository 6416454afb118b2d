import { COSIGNATURE_V1_TYPE } from '@notary/trust/cosignature';
import { ed25519VerifierKey } from '@notary/trust/signed-note';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

/** The witnessing variables: what is refused at start, and what the settings become. */
describe('witness settings', () => {
  const witnessKey = ed25519VerifierKey('w.example/witness', new Uint8Array(32).fill(1), COSIGNATURE_V1_TYPE);
  const logKey = ed25519VerifierKey('a.example/log', new Uint8Array(32).fill(2));

  it('reads the witnesses and the quorum (default: all of them), and refuses a quorum past them', () => {
    const config = loadConfig({ LOG_WITNESSES: `https://w.example/witness/ ${witnessKey}` });
    expect(config.logWitnesses.witnesses.map((w) => [w.url, w.key.name])).toEqual([
      ['https://w.example/witness', 'w.example/witness'],
    ]);
    expect(config.logWitnesses).toMatchObject({ quorum: 1, retrySeconds: 30 });
    expect(loadConfig({}).logWitnesses).toMatchObject({ witnesses: [], quorum: 0 });
    expect(() =>
      loadConfig({ LOG_WITNESSES: `https://w.example/witness ${witnessKey}`, LOG_WITNESS_QUORUM: '2' }),
    ).toThrow(/LOG_WITNESS_QUORUM=2 exceeds the 1 LOG_WITNESSES/);
  });

  it('refuses a log key given as a witness key and a witness key given as a log key', () => {
    expect(() => loadConfig({ LOG_WITNESSES: `https://w.example/witness ${logKey}` })).toThrow(
      /LOG_WITNESSES/,
    );
    expect(() => loadConfig({ WITNESS_LOGS: witnessKey })).toThrow(/WITNESS_LOGS/);
    expect(() => loadConfig({ LOG_WITNESSES: witnessKey })).toThrow(/LOG_WITNESSES/);
  });

  it('witnesses the logs of WITNESS_LOGS with a key in DATA_DIR by default', () => {
    expect(loadConfig({}).witness).toBeUndefined();
    const config = loadConfig({ WITNESS_LOGS: logKey, DATA_DIR: '/srv/notary' });
    expect(config.witness).toMatchObject({ name: undefined, keyFile: '/srv/notary/witness-key.pem' });
    expect(config.witness?.logs.map((k) => k.name)).toEqual(['a.example/log']);
  });
});
