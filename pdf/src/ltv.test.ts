import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addDocumentTimestampField,
  appendValidationData,
  appendValidationDataWithTimestampField,
  DOC_TIMESTAMP_PLACEHOLDER_BYTES,
} from './ltv';

const FIXTURES = path.resolve(import.meta.dirname, '../../../shared/fixtures/pdfs');

/** Blobs as a /DSS holds them (their contents are not read), and a DER value as a signature's /Contents. */
const material = { certs: [new Uint8Array([1, 2, 3])], ocsps: [new Uint8Array([4, 5])], crls: [] };
const vri = [{ signatureContents: new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01, 0, 0]), ...material }];

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
