import type { CaptureRecord } from '../../../ports/capture';

/**
 * The provenance summary page packed into the WACZ (a page of the archive, so a replay tool shows it beside the
 * captured page): made by the service from the record it checked, when it assembles the archive (`archive.ts`),
 * and stored both as a file of the package and as a WARC `resource` record.
 */

/** Largest provenance summary page, bytes: rows past it are counted, not shown (capture.json has them all). */
export const SUMMARY_MAX_BYTES = 1024 * 1024;
/** Longest text of one cell of the summary (a URL may be 64 KiB), characters. */
const CELL_MAX_CHARS = 2_000;
/** Where the provenance summary is replayed from in the archive (a `file:` URL no site can answer for). */
export const PROVENANCE_PAGE_URL = 'file:///provenance-summary.html';
export const PROVENANCE_PAGE_TITLE = 'Provenance summary';
/** The WACZ files of the provenance: the summary page itself and every origin's certificates. */
export const PROVENANCE_FILES = {
  summary: 'capture/provenance-summary.html',
  tls: 'capture/tls.json',
} as const;

/**
 * What the provenance summary states beside the record: the SHA-256 and size of the screenshot as Chromium
 * rendered it (the archive's screenshot carries `capture.json` in a chunk of its own besides: remove it with
 * `stripCaptureRecord` to compare) and of the PDF.
 */
export interface ProvenanceFiles {
  screenshot: { sha256: string; bytes: number };
  pdf: { sha256: string; bytes: number } | undefined;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` cut to `CELL_MAX_CHARS` and escaped for HTML text and attribute values. */
function esc(text: string | number | null | undefined): string {
  const s = text === null || text === undefined ? '' : String(text);
  const cut = s.length > CELL_MAX_CHARS ? `${s.slice(0, CELL_MAX_CHARS)}…` : s;
  return cut.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Builds the page within `SUMMARY_MAX_BYTES`: a table whose rows would pass the bound says how many are left out. */
class BoundedHtml {
  private readonly parts: string[] = [];
  private bytes = 0;
  /** Room kept for what follows a table (its closing, the next headings, the footer). */
  private static readonly RESERVE = 32 * 1024;

  add(html: string): void {
    this.parts.push(html);
    this.bytes += Buffer.byteLength(html);
  }

  table(title: string, head: string[], rows: string[][], empty: string): void {
    this.add(`<h2>${esc(title)}</h2>`);
    if (rows.length === 0) {
      this.add(`<p>${esc(empty)}</p>`);
      return;
    }
    this.add(`<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>`);
    let shown = 0;
    for (const row of rows) {
      const html = `<tr>${row.map((c) => `<td>${c}</td>`).join('')}</tr>`;
      if (this.bytes + Buffer.byteLength(html) > SUMMARY_MAX_BYTES - BoundedHtml.RESERVE) break;
      this.add(html);
      shown++;
    }
    this.add('</tbody></table>');
    if (shown < rows.length) {
      this.add(`<p class="cut">${rows.length - shown} more not shown here: capture.json lists them all.</p>`);
    }
  }

  toBuffer(): Buffer {
    return Buffer.from(this.parts.join(''));
  }
}

/**
 * The provenance summary (HTML, no script, every value escaped, at most `SUMMARY_MAX_BYTES`): the URL asked for
 * and the final URL with the redirect chain, start and end, the service's name and version, Chromium's
 * version, user agent, viewport and the capture's settings, the declared egress address, every origin's TLS,
 * every name answer, every blocked, failed and cut request, and the SHA-256 of the screenshot and the PDF. It
 * is packed as `PROVENANCE_FILES.summary` and replayed from the archive at `PROVENANCE_PAGE_URL`.
 */
export function renderProvenanceSummary(record: CaptureRecord, files: ProvenanceFiles): Buffer {
  const out = new BoundedHtml();
  out.add(PAGE_HEAD);
  out.add(`<h1>${esc(PROVENANCE_PAGE_TITLE)}</h1>`);
  out.add(
    `<p>How this web archive was captured, from the capture's own connections. capture.json holds the same facts as JSON; ${esc(PROVENANCE_FILES.tls)} holds every origin's certificates (PEM) and signed certificate timestamps.</p>`,
  );
  addCapture(out, record);
  addSoftware(out, record);
  addFiles(out, files);
  addTls(out, record);
  addDns(out, record);
  addRequests(out, record);
  out.add('</body></html>\n');
  return out.toBuffer();
}

/** The page's head: its title, a policy that lets nothing load or run, and its style. */
const PAGE_HEAD =
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(PROVENANCE_PAGE_TITLE)}</title>` +
  `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">` +
  '<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#111}table{border-collapse:collapse;margin:.5em 0 1.5em}' +
  'th,td{border:1px solid #bbb;padding:.25em .5em;text-align:left;vertical-align:top}td{word-break:break-all}' +
  'code{font-size:12px}.kv th{background:#f3f3f3;white-space:nowrap}.cut{color:#a00}</style></head><body>';

/** A two-column table of names and values (the values already HTML). */
function kv(rows: Array<[string, string]>): string {
  return `<table class="kv"><tbody>${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${v}</td></tr>`).join('')}</tbody></table>`;
}

/** `s` as code, escaped; the empty string when there is nothing. */
function code(s: string | null | undefined): string {
  return s ? `<code>${esc(s)}</code>` : '';
}

/** The capture itself (URLs, status, title, times, addresses) and its redirect chain. */
function addCapture(out: BoundedHtml, record: CaptureRecord): void {
  out.add('<h2>Capture</h2>');
  out.add(
    kv([
      ['URL requested', esc(record.requestedUrl)],
      ['Final URL', esc(record.finalUrl)],
      ['HTTP status', esc(record.status)],
      ['Page title', esc(record.title)],
      ['Started (UTC)', esc(record.startedAt)],
      ['Finished (UTC)', esc(record.finishedAt)],
      ['Server address', esc(record.serverIp ?? 'unknown')],
      [
        'Egress address',
        record.egressIp
          ? `${esc(record.egressIp)} (declared by the operator, CAPTURE_EGRESS_IP)`
          : 'not declared by the operator',
      ],
    ]),
  );
  out.table(
    'Redirect chain',
    ['#', 'URL', 'Status', 'Location'],
    record.redirects.map((r, i) => [esc(i + 1), esc(r.url), esc(r.status), esc(r.location)]),
    'None: the URL requested answered itself.',
  );
}

/** The software that captured, the browsing conditions and the capture's settings. */
function addSoftware(out: BoundedHtml, record: CaptureRecord): void {
  out.add('<h2>Software and settings</h2>');
  out.add(
    kv([
      ['Service', record.service ? esc(`${record.service.name} ${record.service.version}`) : 'not recorded'],
      ['Browser', esc(`${record.browser.name} ${record.browser.version}`)],
      ['User agent', esc(record.userAgent)],
      ['Viewport (CSS px)', esc(`${record.viewport.width} × ${record.viewport.height}`)],
      ['Locale, time zone', esc(`${record.locale}, ${record.timezone}`)],
      [
        'Screenshot',
        esc(
          `${record.screenshot.width} × ${record.screenshot.height} CSS px${record.screenshot.truncated ? ', cut at the height cap' : ''}`,
        ),
      ],
      ...(record.settings ? settingsRows(record.settings) : []),
      ['Service workers, downloads, permissions', 'blocked, refused, denied'],
    ]),
  );
}

/** The rows of the capture's settings (`CaptureRecord.settings`). */
function settingsRows(settings: NonNullable<CaptureRecord['settings']>): Array<[string, string]> {
  return [
    ['Time bound', esc(`${settings.timeoutMs} ms`)],
    [
      'Scrolling for lazy content',
      esc(`at most ${settings.scroll.maxSteps} steps and ${settings.scroll.maxMs} ms`),
    ],
    ['Screenshot height cap', esc(`${settings.screenshotMaxHeight} CSS px`)],
    [
      'Exceptions to public addresses only',
      esc(settings.allowExceptions === 0 ? 'none' : `${settings.allowExceptions} configured by the operator`),
    ],
    [
      'Private CAs trusted',
      settings.trustedCas.length === 0
        ? 'none'
        : settings.trustedCas
            .map((c) => `${esc(c.subject)} (SHA-256 ${code(c.sha256Fingerprint)})`)
            .join('<br>'),
    ],
  ];
}

/** The SHA-256 and size of the screenshot as rendered and of the PDF. */
function addFiles(out: BoundedHtml, files: ProvenanceFiles): void {
  out.add('<h2>Files of this archive</h2>');
  out.add(
    kv([
      [
        'Screenshot',
        `SHA-256 ${code(files.screenshot.sha256)}, ${esc(files.screenshot.bytes)} bytes: the PNG as Chromium rendered it (the archive's copy also carries capture.json in an iTXt chunk keyworded capture.json; without that chunk it is these bytes)`,
      ],
      [
        'PDF',
        files.pdf ? `SHA-256 ${code(files.pdf.sha256)}, ${esc(files.pdf.bytes)} bytes` : 'not produced',
      ],
    ]),
  );
}

/** Every origin's TLS connection, with the count of those past the bound. */
function addTls(out: BoundedHtml, record: CaptureRecord): void {
  const tls = record.tlsOrigins ?? [];
  out.table(
    `TLS connections (${tls.length} origin(s)${record.tlsOriginsOmitted ? `, ${record.tlsOriginsOmitted} more past the bound, not kept` : ''})`,
    [
      'Origin',
      'Protocol, cipher, key exchange',
      'Leaf subject',
      'Issuer',
      'Valid (UTC)',
      'Leaf SHA-256',
      'Chain',
      'SCTs',
    ],
    tls.map((t) => [
      esc(t.origin),
      esc([t.protocol, t.cipher, t.keyExchange].filter(Boolean).join(', ')),
      esc(t.subject),
      esc(t.issuer),
      esc(`${t.validFrom} to ${t.validTo}`),
      code(t.sha256Fingerprint) || 'not given',
      esc(t.chainLength),
      esc(`${t.scts}${t.ctCompliance ? ` (${t.ctCompliance})` : ''}`),
    ]),
    'None: no origin was reached over TLS.',
  );
}

/** Every name the capture's proxy resolved; a refused name's addresses are never listed. */
function addDns(out: BoundedHtml, record: CaptureRecord): void {
  const dns = record.dns ?? [];
  out.table(
    `Name resolution by the capture's proxy (${dns.length} answer(s)${record.dnsOmitted ? `, ${record.dnsOmitted} more past the bound` : ''})`,
    ['Host', 'Outcome', 'Addresses answered', 'Connected to', 'First answered (UTC)'],
    dns.map((d) => [
      esc(d.host),
      esc(d.outcome === 'failed' ? `failed (${d.error ?? 'no answer'})` : d.outcome),
      d.outcome === 'refused' ? 'not public: not listed' : esc(d.addresses.join(', ')),
      esc(d.connected.join(', ')),
      esc(d.at),
    ]),
    'None: every host was named by its address.',
  );
}

/** The blocked requests, those cut at the time bound and those that failed. */
function addRequests(out: BoundedHtml, record: CaptureRecord): void {
  out.table(
    'Blocked requests',
    ['URL', 'Address', 'Rule', 'Reason'],
    record.blocked.map((b) => [esc(b.url), esc(b.ip ?? '—'), esc(b.rule ?? ''), esc(b.reason)]),
    'None.',
  );
  out.table(
    'Requests cut at the time bound',
    ['URL'],
    record.unfinished.map((u) => [esc(u)]),
    'None.',
  );
  out.table(
    'Failed requests',
    ['URL', 'Reason'],
    record.failed.map((f) => [esc(f.url), esc(f.reason)]),
    'None.',
  );
}
