/**
 * Test support (not used by the service): small, valid PDFs built to exhaust a reader, as an uploader could. Flate
 * bombs keep their real objects first and then `zeroBytes` NUL bytes (PDF whitespace, 7.2.2) inside the same Flate
 * data, so that with a small `zeroBytes` each file is an ordinary PDF that stamps.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDeflate, deflateSync } from 'node:zlib';

const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');

/**
 * zlib data (RFC 1950) of `prefix` followed by `zeroBytes` zero bytes, deflated as a stream in 1 MiB chunks at
 * level 9 (about 1 KB per MiB of zeros: 2 GiB give about 2 MB in a few seconds).
 */
export async function deflatePrefixAndZeros(prefix: Uint8Array, zeroBytes: number): Promise<Buffer> {
  const zero = Buffer.alloc(1 << 20);
  async function* input(): AsyncGenerator<Buffer> {
    yield Buffer.from(prefix);
    for (let left = zeroBytes; left > 0; left -= zero.length) {
      yield left >= zero.length ? zero : zero.subarray(0, left);
    }
  }
  const out: Buffer[] = [];
  await pipeline(Readable.from(input()), createDeflate({ level: 9, memLevel: 9 }), async (chunks) => {
    for await (const chunk of chunks as AsyncIterable<Buffer>) out.push(chunk);
  });
  return Buffer.concat(out);
}

/** Catalog 2, Pages 3, one empty A4 Page 4. */
const OBJECTS: [number, string][] = [
  [2, '<< /Type /Catalog /Pages 3 0 R >>'],
  [3, '<< /Type /Pages /Kids [4 0 R] /Count 1 >>'],
  [4, '<< /Type /Page /Parent 3 0 R /MediaBox [0 0 595 842] >>'],
];

/** One cross-reference stream row with /W [1 4 2], or [1 4 4] with `wide` (7.5.8.3). */
function row(type: number, field2: number, field3: number, wide = false): Buffer {
  const b = Buffer.alloc(wide ? 9 : 7);
  b.writeUInt8(type, 0);
  b.writeUInt32BE(field2, 1);
  if (wide) b.writeUInt32BE(field3, 5);
  else b.writeUInt16BE(field3, 5);
  return b;
}

/** A PDF 1.7 file of `parts` (already laid out), `startxref` pointing at `xrefOffset`. */
function assemble(parts: Buffer[], xrefOffset: number): Uint8Array {
  return new Uint8Array(Buffer.concat([...parts, latin1(`startxref\n${xrefOffset}\n%%EOF\n`)]));
}

const HEADER = Buffer.concat([latin1('%PDF-1.7\n%'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]), latin1('\n')]);

/**
 * A one-page PDF whose catalog, page tree and page sit in an object stream (7.5.7, object 1) whose Flate data
 * inflates to those objects followed by `zeroBytes` zeros; a plain cross-reference stream (object 5) indexes
 * them. With `zeroBytes` of 2 GiB the file is about 2 MB.
 */
export async function objectStreamBombPdf(zeroBytes: number): Promise<Uint8Array> {
  let header = '';
  let body = '';
  for (const [num, text] of OBJECTS) {
    header += `${num} ${body.length} `;
    body += `${text}\n`;
  }
  const data = await deflatePrefixAndZeros(latin1(header + body), zeroBytes);
  const parts: Buffer[] = [HEADER];
  let offset = HEADER.length;
  const push = (b: Buffer) => {
    parts.push(b);
    offset += b.length;
  };
  const objStmAt = offset;
  push(
    latin1(
      `1 0 obj\n<< /Type /ObjStm /N ${OBJECTS.length} /First ${header.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
    ),
  );
  push(data);
  push(latin1('\nendstream\nendobj\n'));
  const xrefAt = offset;
  const rows = Buffer.concat([
    row(0, 0, 65535),
    row(1, objStmAt, 0),
    ...OBJECTS.map((_, index) => row(2, 1, index)),
    row(1, xrefAt, 0),
  ]);
  push(latin1(`5 0 obj\n<< /Type /XRef /Size 6 /W [1 4 2] /Root 2 0 R /Length ${rows.length} >>\nstream\n`));
  push(rows);
  push(latin1('\nendstream\nendobj\n'));
  return assemble(parts, xrefAt);
}

/**
 * A one-page PDF with plain objects whose only cross-reference section is a stream (7.5.8, object 5) whose
 * Flate data inflates to its rows followed by `zeroBytes` zeros (rows of free entries past its /Size).
 */
export async function xrefStreamBombPdf(zeroBytes: number): Promise<Uint8Array> {
  const parts: Buffer[] = [HEADER];
  let offset = HEADER.length;
  const offsets = new Map<number, number>();
  for (const [num, text] of OBJECTS) {
    offsets.set(num, offset);
    const b = latin1(`${num} 0 obj\n${text}\nendobj\n`);
    parts.push(b);
    offset += b.length;
  }
  const xrefAt = offset;
  const rows = Buffer.concat([
    row(0, 0, 65535),
    row(0, 0, 0),
    ...OBJECTS.map(([num]) => row(1, offsets.get(num) ?? 0, 0)),
    row(1, xrefAt, 0),
  ]);
  const data = zeroBytes > 0 ? await deflatePrefixAndZeros(rows, zeroBytes) : deflateSync(rows);
  parts.push(
    latin1(
      `5 0 obj\n<< /Type /XRef /Size 6 /W [1 4 2] /Root 2 0 R /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
    ),
    data,
    latin1('\nendstream\nendobj\n'),
  );
  return assemble(parts, xrefAt);
}

/**
 * A one-page PDF whose object stream (Flate, a few MB) holds `count` small dictionaries besides the page
 * objects: parsing it needs far more heap than its decoded size (a few hundred bytes per object).
 */
export async function manyObjectsPdf(count: number): Promise<Uint8Array> {
  const first = 10;
  const numbers: number[] = [];
  const header: string[] = [];
  const body: string[] = [];
  let bodyLength = 0;
  const add = (num: number, text: string) => {
    numbers.push(num);
    header.push(`${num} ${bodyLength} `);
    body.push(`${text}\n`);
    bodyLength += text.length + 1;
  };
  for (const [num, text] of OBJECTS) add(num, text);
  for (let i = 0; i < count; i += 1) add(first + i, `<</A ${i}/B [${i} ${i}]>>`);
  const headerText = header.join('');
  const data = deflateSync(Buffer.concat([latin1(headerText), latin1(body.join(''))]), { level: 6 });
  const size = first + count;
  const parts: Buffer[] = [HEADER];
  let offset = HEADER.length;
  const objStmAt = offset;
  const head = latin1(
    `1 0 obj\n<< /Type /ObjStm /N ${numbers.length} /First ${headerText.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
  );
  const tail = latin1('\nendstream\nendobj\n');
  parts.push(head, data, tail);
  offset += head.length + data.length + tail.length;
  const xrefAt = offset;
  const byNumber = new Map(numbers.map((num, index) => [num, index]));
  const rows: Buffer[] = [];
  for (let num = 0; num <= size; num += 1) {
    const index = byNumber.get(num);
    if (num === 1) rows.push(row(1, objStmAt, 0, true));
    else if (num === size) rows.push(row(1, xrefAt, 0, true));
    else if (index !== undefined) rows.push(row(2, 1, index, true));
    else rows.push(row(0, 0, num === 0 ? 65535 : 0, true));
  }
  const xref = deflateSync(Buffer.concat(rows));
  parts.push(
    latin1(
      `${size} 0 obj\n<< /Type /XRef /Size ${size + 1} /W [1 4 4] /Root 2 0 R /Filter /FlateDecode /Length ${xref.length} >>\nstream\n`,
    ),
    xref,
    latin1('\nendstream\nendobj\n'),
  );
  return assemble(parts, xrefAt);
}
