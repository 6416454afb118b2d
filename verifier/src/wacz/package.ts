/**
 * Check 1, the package (WACZ 1.1.1 `datapackage.json`): every file it lists has its SHA-256 and size, and no
 * other file is in the zip (a file no hash covers is not signed).
 */

import { sha256Hex } from '@notary/trust/bytes';
import { z } from 'zod';
import { errorMessage } from '../error-message.ts';
import { data, foreign, msg } from '../messages/index.ts';
import { builder, finish } from './check.ts';
import type { WaczCheckResult } from './types.ts';
import { json } from './zip.ts';

const resourceSchema = z.object({ path: z.string(), hash: z.string(), bytes: z.number().int().min(0) });
const datapackageSchema = z.object({ resources: z.array(resourceSchema).max(100_000) });

/** A file `datapackage.json` lists: its path in the zip, `sha256:<hex>` and size in bytes. */
export type WaczResource = z.infer<typeof resourceSchema>;

/**
 * Check 1: the files `datapackage.json` lists against the zip's `files` (`repeated`: names the zip holds more
 * than once). Returns the result and the listed files (none when `datapackage.json` does not parse).
 */
export async function checkPackage(
  files: Map<string, Uint8Array>,
  repeated: string[],
): Promise<{ result: WaczCheckResult; resources: WaczResource[] }> {
  const c = builder();
  let resources: WaczResource[] = [];
  try {
    resources = datapackageSchema.parse(json(files.get('datapackage.json'), 'datapackage.json')).resources;
  } catch (e) {
    c.fail(
      data('datapackage.json'),
      e instanceof z.ZodError ? msg('wacz.notDataPackage') : foreign(errorMessage(e)),
    );
  }
  for (const name of repeated) c.fail(data(name), msg('wacz.repeated'));
  const listed = new Set<string>();
  for (const r of resources) {
    listed.add(r.path);
    const bytes = files.get(r.path);
    if (!bytes) {
      c.fail(data(r.path), msg('wacz.listedNotInArchive'));
      continue;
    }
    const m = /^sha256:([0-9a-f]{64})$/i.exec(r.hash);
    if (!m) {
      c.fail(data(r.path), msg('wacz.hashNotSha256', { hash: r.hash }));
      continue;
    }
    const actual = await sha256Hex(bytes);
    const ok = actual === m[1]?.toLowerCase() && bytes.length === r.bytes;
    const found = { hash: `sha256:${actual}`, bytes: bytes.length };
    c.expect(
      ok,
      data(r.path),
      ok
        ? msg('wacz.hashAndSize', found)
        : msg('wacz.hashAndSizeListed', { ...found, listedHash: r.hash, listedBytes: r.bytes }),
    );
  }
  for (const name of files.keys()) {
    if (name !== 'datapackage.json' && name !== 'datapackage-digest.json' && !listed.has(name)) {
      c.fail(data(name), msg('wacz.notListed'));
    }
  }
  return {
    result: finish(1, c, msg('wacz.packageSummary', { count: resources.length })),
    resources,
  };
}
