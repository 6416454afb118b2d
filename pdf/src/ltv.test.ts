import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addDocumentTimestampField,
  appendValidationData,
  appendValidationDataOn,
  appendValidationDataWithTimestampField,
  appendValidationDataWithTimestampFieldOn,
  DOC_TIMESTAMP_PLACEHOLDER_BYTES,
  fillByteRange,
  loadForUpdates,
  onlySignatureFilled,
} from './ltv';

const FIXTURES = path.resolve(import.meta.dirname, '../../../shared/fixtures/pdfs');

/** Blobs as a /DSS holds them (their contents are not read), and a DER value as a signature's /Contents. */
const material = { certs: [new Uint8Array([1, 2, 3])], ocsps: [new Uint8Array([4, 5])], crls: [] };
const vri = [{ signatureContents: new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01, 0, 0]), ...material }];
const vri2 = [
  {
    signatureContents: new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x02]),
    ...material,
    crls: [new Uint8Array([6])],
  },
];

describe('appendValidationDataWithTimestampField', () => {
  // tracemonkey: classic cross-reference tables; form_two_pages: cross-reference and object streams.
  it.each(['tracemonkey.pdf', 'form_two_pages.pdf'])(
    '%s: the same bytes as the /DSS update and then the field update, each on its own parse',
    async (file) => {
      const pdf = new Uint8Array(await readFile(path.join(FIXTURES, file)));
      const validated = await appendValidationData(pdf, material, vri);
      const prepared = await addDocumentTimestampField(validated, DOC_TIMESTAMP_PLACEHOLDER_BYTES);
      const once = await appendValidationDataWithTimestampField(pdf, material, vri);
      expect(Buffer.compare(once.validated, validated)).toBe(0);
      expect(Buffer.compare(once.prepared, prepared)).toBe(0);
      expect(prepared.length).toBeGreaterThan(validated.length);
    },
  );
});

describe('updates on a file parsed before its signature was filled', () => {
  /** `prepared` with its last signature placeholder filled as signing does: /ByteRange, then /Contents' hex. */
  function filled(prepared: Uint8Array, from: number): Uint8Array {
    const { bytes, byteRange } = fillByteRange(prepared, from);
    bytes.write('3003020101', (byteRange[1] ?? 0) + 1, 'latin1');
    return new Uint8Array(bytes);
  }

  it.each(['tracemonkey.pdf', 'form_two_pages.pdf'])(
    '%s: the same bytes as on a fresh parse of the filled file',
    async (file) => {
      const pdf = new Uint8Array(await readFile(path.join(FIXTURES, file)));
      const prepared = await addDocumentTimestampField(pdf, DOC_TIMESTAMP_PLACEHOLDER_BYTES);
      const stamped = filled(prepared, pdf.length);
      expect(onlySignatureFilled(prepared, stamped)).toBe(true);
      const loaded = await loadForUpdates(prepared);
      const on = await appendValidationDataOn(loaded, stamped, material, vri);
      expect(Buffer.compare(on, await appendValidationData(stamped, material, vri))).toBe(0);
      expect(loaded.bytes).toBe(on);
    },
  );

  it.each(['tracemonkey.pdf', 'form_two_pages.pdf'])(
    '%s: a signing on one parse (/DSS and field, then /DSS after the timestamp) gives the bytes of three parses',
    async (file) => {
      const pdf = new Uint8Array(await readFile(path.join(FIXTURES, file)));
      const loaded = await loadForUpdates(pdf);
      const { validated, prepared } = await appendValidationDataWithTimestampFieldOn(
        loaded,
        pdf,
        material,
        vri,
      );
      const stamped = filled(prepared, validated.length);
      const last = await appendValidationDataOn(loaded, stamped, material, vri2);
      expect(Buffer.compare(last, await appendValidationData(stamped, material, vri2))).toBe(0);
    },
  );

  it('parses the file again when anything else differs', async () => {
    const pdf = new Uint8Array(await readFile(path.join(FIXTURES, 'tracemonkey.pdf')));
    const prepared = await addDocumentTimestampField(pdf, DOC_TIMESTAMP_PLACEHOLDER_BYTES);
    const stamped = filled(prepared, pdf.length);
    const elsewhere = stamped.slice();
    // A byte of the original's first object (not of the signature dictionary).
    const at = Buffer.from(elsewhere).indexOf('obj', 0, 'latin1') + 5;
    elsewhere[at] = (elsewhere[at] ?? 0) ^ 0x20;
    expect(onlySignatureFilled(prepared, elsewhere)).toBe(false);
    expect(onlySignatureFilled(prepared, stamped.subarray(1))).toBe(false);
    // As @signpdf signs: the end of line after %%EOF dropped.
    expect(onlySignatureFilled(prepared, stamped.subarray(0, stamped.length - 1))).toBe(true);
    expect(onlySignatureFilled(prepared, stamped.subarray(0, stamped.length - 3))).toBe(false);
    expect(onlySignatureFilled(prepared, prepared)).toBe(true);
    // @signpdf's placeholder: NUL bytes between the angle brackets of /Contents.
    const nul = Buffer.from(prepared);
    const open = nul.indexOf('<', nul.lastIndexOf('/Contents'), 'latin1');
    nul.fill(0, open + 1, nul.indexOf('>', open, 'latin1'));
    expect(onlySignatureFilled(new Uint8Array(nul), stamped)).toBe(true);
    const loaded = await loadForUpdates(prepared);
    const before = loaded.doc;
    await appendValidationDataOn(loaded, elsewhere.subarray(0), material, vri).catch(() => undefined);
    expect(loaded.doc).not.toBe(before);
  });
});
