import path from 'node:path';

/** Bytes of the file's beginning that content sniffing needs (file-type reads at most 4100). */
export const SNIFF_BYTES = 4100;

/** Text formats a browser would execute or render as markup: never labelled `text/plain`. */
const TEXT_BY_EXTENSION: Record<string, string> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xhtml': 'application/xhtml+xml',
  '.svg': 'image/svg+xml',
  '.xml': 'application/xml',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.csv': 'text/csv',
  '.md': 'text/markdown',
};

/** Markup that makes a "text" file active content when rendered (HTML, SVG, XML with scripts). */
const MARKUP = /<\s*(!doctype|html|svg|script|xml|\?xml|iframe|body|head)\b/i;

/** file-type's detectors, loaded at the first upload (an idle service does not hold them), then kept. */
let fileTypeModule: Promise<typeof import('file-type')> | undefined;

/**
 * The file's real media type (spec, Documents: rule 4, only real PDF, PNG, JPEG, GIF, WebP and plain text go
 * inline). Binary formats are detected from their magic bytes (file-type); text is recognised as valid UTF-8
 * without NUL, and labelled by its extension, as markup when it contains markup, else `text/plain`.
 * Anything unrecognised is `application/octet-stream`. The client's declared type is never trusted.
 */
export async function detectMimeType(
  head: Uint8Array,
  declared: string | undefined,
  fileName: string,
): Promise<string> {
  fileTypeModule ??= import('file-type');
  const detected = await (await fileTypeModule).fileTypeFromBuffer(head);
  if (detected) return detected.mime;
  if (head.length === 0 || !looksLikeText(head)) return 'application/octet-stream';
  const byExtension = TEXT_BY_EXTENSION[path.extname(fileName).toLowerCase()];
  if (byExtension) return byExtension;
  const declaredBase = declared?.split(';')[0]?.trim().toLowerCase();
  if (
    declaredBase &&
    declaredBase !== 'text/plain' &&
    /^(text\/|image\/svg|application\/(xhtml|xml))/.test(declaredBase)
  ) {
    return declaredBase;
  }
  return MARKUP.test(new TextDecoder().decode(head)) ? 'text/html' : 'text/plain';
}

function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    // A multi-byte sequence cut at the end of the head is not an error: drop the last 3 bytes from the check.
    new TextDecoder('utf-8', { fatal: true }).decode(
      head.length >= SNIFF_BYTES ? head.subarray(0, head.length - 3) : head,
    );
    return true;
  } catch {
    return false;
  }
}
