import type { WitnessClient } from '../../ports/witness-client';

/** How long a witness has to answer an `add-checkpoint` call (it signs and writes one row). */
const TIMEOUT_MS = 10_000;
/** Bytes of an answer read at most: a few signature lines, or a size. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The witness client over `fetch` (keep-alive by default, as C2SP tlog-witness recommends). */
export function httpWitnessClient(): WitnessClient {
  return {
    addCheckpoint: async (prefix, body) => {
      const res = await fetch(`${prefix.replace(/\/+$/, '')}/add-checkpoint`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (bytes.length > MAX_ANSWER_BYTES) throw new Error(`the witness answered ${bytes.length} bytes`);
      const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      return { status: res.status, type, body: new TextDecoder().decode(bytes) };
    },
  };
}
