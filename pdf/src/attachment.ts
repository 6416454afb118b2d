import {
  PDFArray,
  PDFDict,
  type PDFDocument,
  PDFHexString,
  PDFName,
  type PDFObject,
  PDFString,
} from 'pdf-lib';

/**
 * Associated files (ISO 32000-2 14.13, PDF/A-3's `/AF`): a file embedded in the PDF (an `/EmbeddedFile`
 * stream, 7.11.4) with its file specification listed in the document catalog's `/Names /EmbeddedFiles` name
 * tree (7.9.6, what viewers and poppler's `pdfdetach` list) and in the catalog's `/AF` array, with its
 * `/AFRelationship`. Written into the update being built, so it is inside a signature's byte range when the
 * signature placeholder comes after it.
 */

/** A file to attach. */
export interface PdfAttachment {
  /** File name shown by viewers (ASCII for `/F`, Unicode for `/UF`), also the name tree key. */
  name: string;
  bytes: Uint8Array;
  /** Media type, e.g. `application/json` (the stream's `/Subtype`). */
  mimeType: string;
  /** `/Desc` of the file specification. */
  description: string;
  /** `/AFRelationship` (ISO 32000-2 Table 43): how the file relates to the document. */
  relationship: 'Source' | 'Data' | 'Alternative' | 'Supplement' | 'Unspecified';
  /** `/Params /ModDate` of the embedded file. */
  modified: Date;
}

/** Most name tree entries an existing `/EmbeddedFiles` tree may have (a bound on untrusted input). */
export const MAX_EMBEDDED_FILE_ENTRIES = 10_000;
const MAX_TREE_DEPTH = 32;

/** The existing tree cannot be extended safely. */
export class AttachmentError extends Error {}

/**
 * Attaches `file` to `doc` (see the module comment). An existing `/EmbeddedFiles` tree keeps its entries:
 * they are gathered (iteratively, at most `MAX_EMBEDDED_FILE_ENTRIES`, depth 32) into one sorted leaf with the
 * new entry, replacing any entry of the same name; an existing `/AF` array is extended.
 * @throws AttachmentError when the existing tree is past those bounds or malformed.
 */
export function attachFile(doc: PDFDocument, file: PdfAttachment): void {
  const context = doc.context;
  const stream = context.flateStream(file.bytes, {
    Type: 'EmbeddedFile',
    Subtype: file.mimeType,
    Params: { Size: file.bytes.length, ModDate: PDFString.fromDate(file.modified) },
  });
  const streamRef = context.register(stream);
  const spec = context.obj({
    Type: 'Filespec',
    F: PDFString.of(file.name),
    UF: PDFHexString.fromText(file.name),
    EF: { F: streamRef, UF: streamRef },
    Desc: PDFHexString.fromText(file.description),
    AFRelationship: file.relationship,
  });
  const specRef = context.register(spec);

  const catalog = doc.catalog;
  let names = catalog.lookup(PDFName.of('Names'));
  if (!(names instanceof PDFDict)) {
    names = context.obj({});
    catalog.set(PDFName.of('Names'), names);
  }
  const namesDict = names as PDFDict;
  const existing = namesDict.lookup(PDFName.of('EmbeddedFiles'));
  const entries = existing instanceof PDFDict ? collectEntries(existing) : [];
  const key = PDFString.of(file.name);
  const kept = entries.filter((e) => compareBytes(e.key.asBytes(), key.asBytes()) !== 0);
  kept.push({ key, value: specRef });
  kept.sort((a, b) => compareBytes(a.key.asBytes(), b.key.asBytes()));
  const flat = context.obj([]);
  for (const e of kept) {
    flat.push(e.key);
    flat.push(e.value);
  }
  if (existing instanceof PDFDict) {
    // The root stays the same object (it may be indirect): one leaf now, its old kids unreferenced.
    existing.delete(PDFName.of('Kids'));
    existing.delete(PDFName.of('Limits'));
    existing.set(PDFName.of('Names'), flat);
  } else {
    namesDict.set(PDFName.of('EmbeddedFiles'), context.obj({ Names: flat }));
  }

  const af = catalog.lookup(PDFName.of('AF'));
  if (af instanceof PDFArray) af.push(specRef);
  else catalog.set(PDFName.of('AF'), context.obj([specRef]));
}

interface Entry {
  key: PDFString | PDFHexString;
  value: PDFObject;
}

function collectEntries(root: PDFDict): Entry[] {
  const entries: Entry[] = [];
  const seen = new Set<PDFDict>();
  const stack: { node: PDFDict; depth: number }[] = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (!item) break;
    if (seen.has(item.node)) throw new AttachmentError('the /EmbeddedFiles name tree has a loop');
    if (item.depth > MAX_TREE_DEPTH) throw new AttachmentError('the /EmbeddedFiles name tree is too deep');
    seen.add(item.node);
    const names = item.node.lookup(PDFName.of('Names'));
    if (names instanceof PDFArray) {
      for (let i = 0; i + 1 < names.size(); i += 2) {
        const key = names.lookup(i);
        const value = names.get(i + 1);
        if (!(key instanceof PDFString || key instanceof PDFHexString) || value === undefined) {
          throw new AttachmentError('an /EmbeddedFiles name tree key is not a string');
        }
        entries.push({ key, value });
        if (entries.length > MAX_EMBEDDED_FILE_ENTRIES) {
          throw new AttachmentError(`more than ${MAX_EMBEDDED_FILE_ENTRIES} embedded files`);
        }
      }
    }
    const kids = item.node.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray) {
      for (let i = kids.size() - 1; i >= 0; i -= 1) {
        const kid = kids.lookup(i);
        if (!(kid instanceof PDFDict)) throw new AttachmentError('an /EmbeddedFiles kid is not a dictionary');
        stack.push({ node: kid, depth: item.depth + 1 });
      }
    }
  }
  return entries;
}

/** Byte-wise order of name tree keys (7.9.6: "sorted lexically... by the bytes of the string"). */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}
