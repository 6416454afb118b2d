/**
 * Reading the WACZ's zip (WACZ 1.1.1: a zip of stored or deflated entries) and its JSON files, within bounds.
 */
import { unzipSync } from 'fflate';
import { errorMessage } from '../error-message.ts';
import { MAX_WACZ_BYTES, WaczFormatError } from './types.ts';

/** Largest JSON file of the package read (`datapackage.json`, its digest, `capture.json`), bytes. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;

/**
 * The JSON in `bytes` (strict UTF-8), the file named `what` in errors.
 * @throws Error when absent, larger than 16 MiB, or not JSON.
 */
export function json(bytes: Uint8Array | undefined, what: string): unknown {
  if (!bytes) throw new Error(`${what}: absent`);
  if (bytes.length > MAX_JSON_BYTES) throw new Error(`${what}: larger than ${MAX_JSON_BYTES} bytes`);
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw new Error(`${what}: not JSON (${errorMessage(e)})`);
  }
}

/**
 * Reads the zip: every entry by name (folders left out); repeated names are reported, deflated entries
 * inflated within bounds.
 * @throws WaczFormatError when `bytes` is not a zip, an entry is compressed otherwise than stored or deflated,
 *   or an entry is larger than `MAX_WACZ_BYTES` once inflated.
 */
export function readZip(bytes: Uint8Array): { files: Map<string, Uint8Array>; repeated: string[] } {
  const seen = new Set<string>();
  const repeated: string[] = [];
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, {
      filter: (f) => {
        if (seen.has(f.name)) repeated.push(f.name);
        seen.add(f.name);
        if (f.compression !== 0 && f.compression !== 8)
          throw new Error(`${f.name}: compression ${f.compression}`);
        if (f.originalSize > MAX_WACZ_BYTES) throw new Error(`${f.name}: ${f.originalSize} bytes`);
        return true;
      },
    });
  } catch (e) {
    throw new WaczFormatError(`not a WACZ (a zip file): ${errorMessage(e)}`);
  }
  return { files: new Map(Object.entries(entries).filter(([name]) => !name.endsWith('/'))), repeated };
}
