/**
 * A PDF signature's CMS as OpenSSL sees it: the `index`-th `/ByteRange` of the file (ISO 32000-1 12.8.1), its
 * covered bytes and its `/Contents` CMS (RFC 5652, DER without the placeholder's zero padding), verified with
 * `openssl cms -verify` over exactly those bytes to a CA file, and printed with `openssl cms -cmsout -print`
 * (its signed attributes, e.g. the ICP-Brasil policy OID and a signature timestamp, read there).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { asn1js } from '@notary/trust/asn1';

const run = promisify(execFile);

/**
 * The covered bytes and the CMS of the file's `index`-th signature (0 the first, document timestamps count),
 * where its `/Contents` hex digits start (`hexAt`) and where its revision ends (`end`).
 */
export function nthSignature(
  pdf: Uint8Array,
  index: number,
): { content: Buffer; cms: Buffer; hexAt: number; end: number } {
  const buf = Buffer.from(pdf);
  const ranges = [...buf.toString('latin1').matchAll(/\/ByteRange \[(\d+) (\d+) (\d+) (\d+) *\]/g)];
  const m = ranges[index];
  if (!m) throw new Error(`no signature #${index}`);
  const [, b, c, d] = m.slice(1, 5).map(Number) as [number, number, number, number];
  const padded = Buffer.from(buf.subarray(b + 1, c - 1).toString('latin1'), 'hex');
  return {
    content: Buffer.concat([buf.subarray(0, b), buf.subarray(c, c + d)]),
    cms: padded.subarray(0, asn1js.fromBER(padded).offset),
    hexAt: b + 1,
    end: c + d,
  };
}

/**
 * `openssl cms -verify` of the file's `index`-th signature over its byte ranges, to the certificates of
 * `caFile` (any purpose), then `openssl cms -cmsout -print` of it; the files are written in `dir`. Returns the
 * printed structure. @throws the OpenSSL error when the signature does not verify.
 */
export async function opensslVerifySignature(
  pdf: Uint8Array,
  index: number,
  caFile: string,
  dir: string,
): Promise<string> {
  const { content, cms } = nthSignature(pdf, index);
  const contentPath = path.join(dir, `signature-${index}.bin`);
  const cmsPath = path.join(dir, `signature-${index}.p7s`);
  await writeFile(contentPath, content);
  await writeFile(cmsPath, cms);
  await run('openssl', [
    'cms',
    '-verify',
    '-binary',
    '-inform',
    'DER',
    '-in',
    cmsPath,
    '-content',
    contentPath,
    '-CAfile',
    caFile,
    '-purpose',
    'any',
    '-out',
    '/dev/null',
  ]);
  const printed = await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', cmsPath]);
  return printed.stdout;
}
