import { PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import {
  addSrgbOutputIntent,
  applyPdfACopy,
  type OriginalPdfA,
  pdfaLabel,
  planPdfACopy,
  readPdfA,
  srgbIccProfile,
  xmlSafeText,
} from './pdfa';

/**
 * The PDF/A declaration of an original as `pdfa.ts` reads and rewrites it. Whole certificates are checked with the
 * independent checker in `test/e2e/certificates-pdfa.test.ts`.
 */

async function withXmp(xmp: string, intentComponents?: number): Promise<PDFDocument> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const stream = doc.context.stream(new Uint8Array(Buffer.from(xmp, 'utf8')), {
    Type: 'Metadata',
    Subtype: 'XML',
  });
  doc.catalog.set(PDFName.of('Metadata'), doc.context.register(stream));
  if (intentComponents !== undefined) {
    const profile = doc.context.register(doc.context.stream(new Uint8Array(8), { N: intentComponents }));
    const intent = doc.context.obj({ Type: 'OutputIntent', S: 'GTS_PDFA1', DestOutputProfile: profile });
    doc.catalog.set(PDFName.of('OutputIntents'), doc.context.obj([intent]));
  }
  return doc;
}

const ELEMENT_FORM = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:id="http://www.aiim.org/pdfa/ns/id/"><id:part> 2 </id:part><id:conformance>a</id:conformance></rdf:Description>
</rdf:RDF></x:xmpmeta>`;
const ATTRIBUTE_FORM = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="1" pdfaid:conformance="B"/>
</rdf:RDF></x:xmpmeta>`;

function metadataText(doc: PDFDocument): string {
  const stream = doc.catalog.lookup(PDFName.of('Metadata'));
  if (!(stream instanceof PDFRawStream)) throw new Error('no metadata');
  expect(stream.dict.get(PDFName.of('Filter'))).toBeUndefined();
  return Buffer.from(stream.contents).toString('utf8');
}

describe('readPdfA', () => {
  it('reads pdfaid under any prefix, as elements or attributes, and the output intent components', async () => {
    const element = readPdfA(await withXmp(ELEMENT_FORM, 4));
    expect(element.declared).toEqual({ part: 2, conformance: 'A' });
    expect(element.prefix).toBe('id');
    expect(element.outputIntentComponents).toBe(4);
    const attribute = readPdfA(await withXmp(ATTRIBUTE_FORM));
    expect(attribute.declared).toEqual({ part: 1, conformance: 'B' });
    expect(attribute.outputIntentComponents).toBeNull();
  });

  it('finds no declaration without metadata, without the namespace, or with a part out of range', async () => {
    expect(readPdfA(await PDFDocument.create()).declared).toBeNull();
    expect(readPdfA(await withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"/>')).declared).toBeNull();
    expect(readPdfA(await withXmp(ATTRIBUTE_FORM.replace('part="1"', 'part="9"'))).declared).toBeNull();
  });

  it('reads a hostile packet in linear time', async () => {
    const hostile = `xmlns:p="http://www.aiim.org/pdfa/ns/id/" p:part="${' '.repeat(2_000_000)}`;
    const started = process.hrtime.bigint();
    expect(readPdfA(await withXmp(hostile)).declared).toBeNull();
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });
});

describe('planPdfACopy', () => {
  const read = (part: number, conformance: string, n: number | null): OriginalPdfA => ({
    declared: { part, conformance },
    xmp: null,
    prefix: null,
    outputIntentComponents: n,
  });

  it('declares part 3 for an attached receipt, level B for level A, keeps U, and greys under CMYK', () => {
    expect(planPdfACopy(read(2, 'B', 3), true)).toEqual({
      original: { part: 2, conformance: 'B' },
      produced: { part: 3, conformance: 'B' },
      changes: ['part-3-for-attachment'],
      colour: 'rgb',
      addOutputIntent: false,
    });
    expect(planPdfACopy(read(1, 'A', 4), true)).toMatchObject({
      produced: { part: 3, conformance: 'B' },
      changes: ['part-3-for-attachment', 'level-b-untagged'],
      colour: 'gray',
    });
    expect(planPdfACopy(read(3, 'U', 1), true)).toMatchObject({
      produced: { part: 3, conformance: 'U' },
      changes: [],
      colour: 'gray',
    });
    expect(planPdfACopy(read(2, 'B', null), false)).toMatchObject({
      produced: { part: 2, conformance: 'B' },
      addOutputIntent: true,
    });
    expect(planPdfACopy(read(4, '', 3), true)).toMatchObject({
      produced: { part: 4, conformance: 'F' },
      changes: ['level-f-for-attachment'],
    });
    expect(planPdfACopy({ ...read(1, 'B', 3), declared: null }, true)).toBeNull();
  });
});

describe('applyPdfACopy', () => {
  it('rewrites pdfaid in a new uncompressed metadata stream, keeping the rest of the packet', async () => {
    for (const xmp of [ELEMENT_FORM, ATTRIBUTE_FORM]) {
      const doc = await withXmp(xmp, 3);
      const read = readPdfA(doc);
      const plan = planPdfACopy(read, true);
      if (!plan) throw new Error('no plan');
      applyPdfACopy(doc, read, plan);
      const again = readPdfA(doc);
      expect(again.declared).toEqual({ part: 3, conformance: 'B' });
      expect(metadataText(doc).replace(/3/g, '').length).toBeGreaterThan(xmp.length - 10);
    }
  });

  it('inserts a conformance level where a PDF/A-4 packet has none', async () => {
    const xmp = ELEMENT_FORM.replace(
      '<id:part> 2 </id:part><id:conformance>a</id:conformance>',
      '<id:part>4</id:part>',
    );
    const doc = await withXmp(xmp, 3);
    const read = readPdfA(doc);
    const plan = planPdfACopy(read, true);
    if (!plan) throw new Error('no plan');
    applyPdfACopy(doc, read, plan);
    expect(readPdfA(doc).declared).toEqual({ part: 4, conformance: 'F' });
  });
});

describe('the sRGB profile and metadata text', () => {
  it('loads an ICC v2 RGB display profile from pdfkit and adds it as the PDF/A output intent', async () => {
    const icc = srgbIccProfile();
    const header = Buffer.from(icc.subarray(0, 40));
    expect(header.readUInt32BE(0)).toBe(icc.length);
    expect(header.toString('latin1', 12, 20)).toBe('mntrRGB ');
    expect(header.toString('latin1', 36, 40)).toBe('acsp');
    const doc = await PDFDocument.create();
    addSrgbOutputIntent(doc);
    expect(readPdfA(doc).outputIntentComponents).toBe(3);
  });

  it('replaces what XML cannot carry, in both the Info dictionary and the XMP', () => {
    expect(xmlSafeText('a\u0001b\tc\uD800d😀')).toBe('a\uFFFDb\tc\uFFFDd😀');
    expect(pdfaLabel({ part: 3, conformance: 'B' })).toBe('PDF/A-3b');
  });
});
