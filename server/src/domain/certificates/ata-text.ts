import { gunzipAll, parseWarc, payloadOf, type WarcRecord } from '@notary/verify/wacz';
import { unzipSync } from 'fflate';
import { convert } from 'html-to-text';

/**
 * The text of a captured page for its ata notarial draft, read back from the capture's own WACZ (the file whose
 * SHA-256 was notarized): the main document's HTML as the browser received it, as plain text without scripts,
 * styles, images or link targets. Text that scripts wrote into the page afterwards is not in it; the screenshot
 * shows it.
 */

/** Where a capture's WACZ holds its WARC (`adapters/capture/service/wacz-layout.ts`, `WACZ_PATHS.warc`). */
const WARC_PATH = 'archive/data.warc.gz';
/** Largest WARC inflated to look for the page, bytes. */
const WARC_MAX_BYTES = 256 * 1024 * 1024;
/** Largest HTML converted to text, bytes (html-to-text's own bound on its input). */
const HTML_MAX_CHARS = 4 * 1024 * 1024;

/**
 * The visible text of the page at `finalUrl` in `wacz` (a capture's WACZ, already read within its bound), or why
 * there is none: not a zip, no WARC, no response for the URL, not HTML. Never throws on the archive's content.
 */
export function visibleTextOfWacz(
  wacz: Uint8Array,
  finalUrl: string,
): { text: string } | { unavailable: string } {
  let warc: Uint8Array | undefined;
  try {
    warc = unzipSync(wacz, {
      filter: (f) => f.name === WARC_PATH && f.originalSize <= WARC_MAX_BYTES,
    })[WARC_PATH];
  } catch {
    return { unavailable: 'o arquivo WACZ não pôde ser lido' };
  }
  if (!warc) return { unavailable: 'o arquivo WACZ não contém o WARC da página' };
  let records: WarcRecord[];
  try {
    records = parseWarc(gunzipAll(warc).data);
  } catch {
    return { unavailable: 'o WARC do arquivo não pôde ser lido' };
  }
  const response = records.findLast(
    (r) => r.headers.get('warc-type') === 'response' && r.headers.get('warc-target-uri') === finalUrl,
  );
  if (!response) return { unavailable: 'o WARC não contém a resposta do endereço final' };
  const contentType = httpHeader(response, 'content-type') ?? '';
  if (!/html|xml|text\//i.test(contentType)) {
    return { unavailable: `a resposta não é uma página de texto (${contentType || 'tipo não declarado'})` };
  }
  const html = decode(payloadOf(response), contentType);
  return {
    text: convert(html, {
      wordwrap: false,
      limits: { maxInputLength: HTML_MAX_CHARS },
      selectors: [
        { selector: 'a', options: { ignoreHref: true } },
        { selector: 'img', format: 'skip' },
        { selector: 'script', format: 'skip' },
        { selector: 'style', format: 'skip' },
        { selector: 'noscript', format: 'skip' },
        { selector: 'template', format: 'skip' },
        // Headings and table heads as the page wrote them, not upper-cased: the ata transcribes, it does not restyle.
        ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
          selector,
          options: { uppercase: false },
        })),
        { selector: 'table', options: { uppercaseHeaderCells: false } },
      ],
    }),
  };
}

/** An HTTP header of a WARC response record's block (first match, case-insensitive). */
function httpHeader(record: WarcRecord, name: string): string | undefined {
  const block = record.block;
  let end = 0;
  while (
    end + 3 < block.length &&
    !(block[end] === 13 && block[end + 1] === 10 && block[end + 2] === 13 && block[end + 3] === 10)
  )
    end++;
  const head = new TextDecoder('latin1').decode(block.subarray(0, end));
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name}:`));
  return line?.slice(name.length + 1).trim();
}

/** The body in the charset the response declared, UTF-8 otherwise (or when the label is unknown). */
function decode(body: Uint8Array, contentType: string): string {
  const label = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
