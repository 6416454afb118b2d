/**
 * Check 1, the package (WACZ 1.1.1 `datapackage.json`): every file it lists has its SHA-256 and size, and no
 * other file is in the zip (a file no hash covers is not signed).
 */
import { z } from 'zod';
import { sha256Hex } from '../bytes.ts';
import { errorMessage } from '../error-message.ts';
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
      'datapackage.json',
      e instanceof z.ZodError ? 'not a data package (no resources list)' : errorMessage(e),
    );
  }
  for (const name of repeated) c.fail(name, 'is in the zip more than once');
  const listed = new Set<string>();
  for (const r of resources) {
    listed.add(r.path);
    const data = files.get(r.path);
    if (!data) {
      c.fail(r.path, 'listed but not in the archive');
      continue;
    }
    const m = /^sha256:([0-9a-f]{64})$/i.exec(r.hash);
    if (!m) {
      c.fail(r.path, `hash ${r.hash}: only sha256:<hex> is read`);
      continue;
    }
    const actual = await sha256Hex(data);
    const ok = actual === m[1]?.toLowerCase() && data.length === r.bytes;
    c.expect(
      ok,
      r.path,
      ok
        ? `sha256:${actual}, ${data.length} bytes`
        : `sha256:${actual}, ${data.length} bytes (listed ${r.hash}, ${r.bytes} bytes)`,
    );
  }
  for (const name of files.keys()) {
    if (name !== 'datapackage.json' && name !== 'datapackage-digest.json' && !listed.has(name)) {
      c.fail(name, 'in the archive but not listed in datapackage.json (no hash covers it)');
    }
  }
  return {
    result: finish(
      1,
      c,
      `the ${resources.length} files listed in datapackage.json have their SHA-256 and size`,
    ),
    resources,
  };
}
