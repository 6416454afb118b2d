import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/** `../shared/fixtures` beside the checkout (tests only; the product never reads it). */
export const FIXTURES_DIR = path.resolve(import.meta.dirname, '../../../shared/fixtures');

/** Every file of `fixtures/pdfs` and `fixtures/files`, absolute paths, sorted. */
export async function fixtureFiles(): Promise<string[]> {
  const out: string[] = [];
  for (const sub of ['pdfs', 'files']) {
    const dir = path.join(FIXTURES_DIR, sub);
    for (const name of (await readdir(dir)).sort()) out.push(path.join(dir, name));
  }
  return out;
}

/** SHA-256 of a file by the system's `sha256sum` (GNU coreutils): a third-party reference for our hashing. */
export async function sha256sum(file: string): Promise<string> {
  const { stdout } = await promisify(execFile)('sha256sum', ['--binary', file]);
  return stdout.split(' ')[0] ?? '';
}
