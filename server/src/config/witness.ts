import path from 'node:path';
import { COSIGNATURE_V1_TYPE } from '@notary/trust/cosignature';
import { parseEd25519VerifierKey, parseVerifierKey, type VerifierKey } from '@notary/trust/signed-note';
import { z } from 'zod';
import { invalidConfig, isBaseUrl, optionalString, stripSlash } from './env';

/** A list variable: entries separated by commas or newlines, trimmed, without empty ones. */
const entries = (value: string): string[] =>
  value
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);

/** Whether `vkey` parses as a verifier key of signature `type`. */
function isKey(vkey: string, type: number): boolean {
  try {
    parseEd25519VerifierKey(vkey, type);
    return true;
  } catch {
    return false;
  }
}

/**
 * The transparency log's witnesses and this service as a witness of other logs (docs/verify.md, Witnesses;
 * C2SP tlog-witness).
 */
export const WitnessEnv = z.object({
  LOG_WITNESSES: z
    .string()
    .default('')
    .transform(entries)
    .refine(
      (list) =>
        list.every((e) => {
          const [url = '', vkey = '', ...rest] = e.split(/\s+/);
          return rest.length === 0 && isBaseUrl(url) && isKey(vkey, COSIGNATURE_V1_TYPE);
        }),
      'comma-separated "<witness URL> <witness verifier key>" entries (Ed25519 cosignature/v1 keys)',
    ),
  LOG_WITNESS_QUORUM: z.coerce.number().int().min(1).max(100).optional(),
  LOG_WITNESS_RETRY_SECONDS: z.coerce.number().int().min(1).max(86_400).default(30),
  WITNESS_LOGS: z
    .string()
    .default('')
    .transform(entries)
    .refine((list) => list.every((k) => isKey(k, 0x01)), 'comma-separated log verifier keys (Ed25519)'),
  WITNESS_NAME: optionalString.refine(
    (v) => v === undefined || /^[^\s+]+$/.test(v),
    'a key name: no spaces, no "+" (e.g. notary.example/witness)',
  ),
  WITNESS_KEY_FILE: optionalString,
});
export type WitnessEnv = z.infer<typeof WitnessEnv>;

/** The witnessing settings: the log's own witnesses, and the logs this service witnesses. */
export interface WitnessSettings {
  logWitnesses: {
    /** Each witness's submission prefix (`<url>/add-checkpoint`) and cosigner key. */
    witnesses: { url: string; key: VerifierKey }[];
    /** Cosignatures that make a checkpoint final (default: every witness's). */
    quorum: number;
    /** Seconds before a checkpoint short of its quorum is sent again (doubling, up to 10 times as long). */
    retrySeconds: number;
  };
  /** Undefined when the service witnesses no log (`WITNESS_LOGS` empty). */
  witness:
    | {
        /** The logs witnessed: their verifier keys, whose names are their origins. */
        logs: VerifierKey[];
        /** The witness key's name; undefined: `<public URL host and path>/witness`, fixed on first start. */
        name: string | undefined;
        keyFile: string;
      }
    | undefined;
}

/**
 * The witnessing settings of `e`.
 * @throws Error (`invalidConfig`) when `LOG_WITNESS_QUORUM` exceeds the witnesses configured.
 */
export function witnessSettings(e: WitnessEnv, dataDir: string): WitnessSettings {
  const witnesses = e.LOG_WITNESSES.map((entry) => {
    const [url = '', vkey = ''] = entry.split(/\s+/);
    return { url: stripSlash(url), key: parseEd25519VerifierKey(vkey, COSIGNATURE_V1_TYPE) };
  });
  const quorum = e.LOG_WITNESS_QUORUM ?? witnesses.length;
  if (quorum > witnesses.length) {
    throw invalidConfig(
      `LOG_WITNESS_QUORUM=${quorum} exceeds the ${witnesses.length} LOG_WITNESSES configured`,
    );
  }
  return {
    logWitnesses: { witnesses, quorum, retrySeconds: e.LOG_WITNESS_RETRY_SECONDS },
    witness:
      e.WITNESS_LOGS.length === 0
        ? undefined
        : {
            logs: e.WITNESS_LOGS.map((k) => parseVerifierKey(k)),
            name: e.WITNESS_NAME,
            keyFile: e.WITNESS_KEY_FILE ?? path.join(dataDir, 'witness-key.pem'),
          },
  };
}
