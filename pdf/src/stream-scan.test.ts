import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PDFDocument, PDFRawStream } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { installFastStreamScan } from './stream-scan';

/** Every stream of `bytes` as pdf-lib parses it (object number → contents as hex), or the error it throws. */
async function parsed(bytes: Uint8Array): Promise<Map<number, string> | string> {
  try {
    const doc = await PDFDocument.load(bytes, { updateMetadata: false, ignoreEncryption: true });
    const streams = new Map<number, string>();
    for (const [ref, obj] of doc.context.enumerateIndirectObjects()) {
      if (obj instanceof PDFRawStream)
        streams.set(ref.objectNumber, Buffer.from(obj.contents).toString('hex'));
    }
    return streams;
  } catch (error) {
    return (error as Error).constructor.name;
  }
}

const latin1 = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));

/** A one-object file whose stream has an indirect /Length (the fallback path), the stream bytes as given. */
function withStream(body: string): Uint8Array {
  return latin1(
    `%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n` +
      `3 0 obj\n<< /Length 4 0 R >>\nstream\n${body}\n4 0 obj\n5\nendobj\ntrailer\n<< /Root 1 0 R /Size 5 >>\n%%EOF\n`,
  );
}

const SYNTHETIC = {
  lf: 'hello\nendstream\nendobj',
  crlf: 'hello\r\nendstream\nendobj',
  cr: 'hello\rendstream\nendobj',
  bare: 'helloendstream\nendobj',
  nested: 'a stream b\nendstream x endstream\nendobj',
  keywordAtStart: 'stream\nendstream\nendstream\nendobj',
  unterminated: 'hello, no end at all',
  nestedUnterminated: 'stream stream\nendstream\nendobj',
};

describe('installFastStreamScan', () => {
  it('parses the fixtures and the edge cases exactly as pdf-lib alone does', async () => {
    const dir = path.resolve(import.meta.dirname, '../../../shared/fixtures/pdfs');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.pdf')).sort();
    const inputs = [
      ...(await Promise.all(
        files.map(async (f) => [f, new Uint8Array(await readFile(path.join(dir, f)))] as const),
      )),
      ...Object.entries(SYNTHETIC).map(([label, body]) => [label, withStream(body)] as const),
    ];
    // pdf-lib's own search first (this file's module graph has not installed the faster one yet).
    const expected = await Promise.all(inputs.map(([, bytes]) => parsed(bytes)));
    expect(installFastStreamScan()).toBe(true);
    const actual = await Promise.all(inputs.map(([, bytes]) => parsed(bytes)));
    inputs.forEach(([label], i) => {
      expect({ label, result: actual[i] }).toEqual({ label, result: expected[i] });
    });
    // The edge cases do reach the search: where the stream ends, or no stream when it never does.
    const hex = (text: string) => Buffer.from(text, 'latin1').toString('hex');
    expect(actual.slice(-8).map((r) => (typeof r === 'string' ? r : r.get(3)))).toEqual([
      ...[0, 1, 2, 3].map(() => hex('hello')),
      hex('a stream b\nendstream x '),
      hex('stream\nendstream'),
      undefined,
      undefined,
    ]);
  });
});
