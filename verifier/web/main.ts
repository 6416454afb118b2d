/**
 * The verify page (`verify.html`, built by `build/build.ts`): the six checks of `notary-verify` in a browser,
 * on several files at once (`verifyBatch`, as `notary-verify --dir`), with the chain endpoints and trust
 * anchors the user chooses; and the seven checks of a signed web capture (`.wacz`, `verifyWacz`, as
 * `notary-verify <capture.wacz>`), which needs nothing beside it (`captures.ts`). Nothing leaves the browser
 * but the requests of checks 3 and 4 to the endpoints typed here; checks 5 and 6 make none (the page does
 * not fetch revocation data: `--online` is the command line's), nor does a capture's. Plain DOM, no
 * framework: the page is one file that must be readable and small.
 */
import { endpointProblem } from '@notary/shared/endpoint';
import { formatBytes } from '@notary/shared/format-bytes';
import { pemCertificates } from '@notary/trust/bytes';
import { type BatchItem, type BatchOutcome, type BatchResult, verifyBatch } from '../src/batch.ts';
import { errorMessage } from '../src/error-message.ts';
import { ICP_BRASIL_ROOTS_PEM } from '../src/icp-brasil-roots.ts';
import { type Message, msg, render, renderSource, textOf } from '../src/messages/index.ts';
import { chainMessages } from '../src/monitor-chain.ts';
import type { CheckResult, PadesSignerReport, VerifyReport } from '../src/report.ts';
import { formatBrasiliaAndUtc, withBrasiliaTimes } from '../src/time.ts';
import type { WaczCheckResult, WaczReport } from '../src/wacz/index.ts';
import {
  type CaptureItem,
  isWacz,
  type PageResult,
  pageCsv,
  pageResult,
  verifyCaptures,
} from './captures.ts';
import { type ChainItem, verifyCertidoes } from './certidoes.ts';
import { type Language, type MessageKey, message, preferredLanguage } from './i18n.ts';

declare const __NOTARY_VERIFY_VERSION__: string;

/** Most PEM files picked as trust anchors, their largest size (bytes) and most certificates in all. */
const MAX_ANCHOR_FILES = 8;
const MAX_ANCHOR_FILE_BYTES = 1024 * 1024;
const MAX_ANCHOR_CERTIFICATES = 256;
/** Most endpoints per chain: each one is asked. */
const MAX_ENDPOINTS = 8;

type TrustKind = 'none' | 'icp-brasil' | 'files';

interface State {
  lang: Language;
  files: File[];
  anchorFiles: File[];
  running: { done: number; total: number } | null;
  result: PageResult | null;
  error: { key: MessageKey; params?: Record<string, string | number> } | null;
}

const state: State = {
  lang: preferredLanguage(navigator.languages ?? [navigator.language]),
  files: [],
  anchorFiles: [],
  running: null,
  result: null,
  error: null,
};

const t = (key: MessageKey, params?: Record<string, string | number>) => message(state.lang, key, params);
/**
 * A text of the report in the page's language from its message (a report written before messages: its
 * English text), its times in Brasília time and UTC.
 */
const rt = (message: Message | undefined, text: string): string =>
  withBrasiliaTimes(textOf(message, text, state.lang), state.lang);
/** A time of a report (RFC 3339 UTC, or as a capture record wrote it) in Brasília time and UTC. */
const when = (time: string | null | undefined): string => (time ? withBrasiliaTimes(time, state.lang) : '?');

/** Elements whose text follows the language: re-run on a switch. */
const texts: (() => void)[] = [];

type Child = Node | string | null | undefined | false;

/** `document.createElement` with attributes (`on*` functions become listeners) and children. */
function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | ((e: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else if (value !== false) el.setAttribute(name, value);
  }
  for (const child of children) if (child) el.append(child);
  return el;
}

/** An element whose text is `text()` in the current language (kept up to date). */
function tx<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text: () => string,
  attrs: Record<string, string | boolean | ((e: Event) => void)> = {},
): HTMLElementTagNameMap[K] {
  const el = h(tag, attrs);
  const set = () => {
    el.textContent = text();
  };
  set();
  texts.push(set);
  return el;
}

// ---- The form (built once; its texts follow the language) ----

const fileInput = h('input', { type: 'file', multiple: true, id: 'files', 'data-testid': 'files' });
const fileList = h('ul', { class: 'file-list', 'data-testid': 'file-list' });
const evmInput = h('textarea', { id: 'evm', rows: '2', spellcheck: 'false', 'data-testid': 'evm' });
const stacksInput = h('textarea', { id: 'stacks', rows: '2', spellcheck: 'false', 'data-testid': 'stacks' });
const confirmationsInput = h('input', {
  id: 'confirmations',
  type: 'number',
  min: '1',
  step: '1',
  value: '1',
  'data-testid': 'confirmations',
});
const anchorInput = h('input', {
  type: 'file',
  multiple: true,
  accept: '.pem,.crt,.cer,.txt',
  id: 'anchors',
  'data-testid': 'anchor-files',
});
const anchorList = h('p', { class: 'muted small', 'data-testid': 'anchor-list' });
const atInput = h('input', { id: 'at', type: 'datetime-local', step: '1', 'data-testid': 'at' });
const atHelp = h('small', { class: 'muted', 'data-testid': 'at-utc' });
const runButton = h('button', { type: 'button', class: 'primary', 'data-testid': 'run' });
const status = h('p', { class: 'status', role: 'status', 'data-testid': 'status' });
const results = h('section', { class: 'results', 'data-testid': 'results', 'aria-live': 'polite' });

function trustRadio(kind: TrustKind, key: MessageKey): HTMLLabelElement {
  const input = h('input', {
    type: 'radio',
    name: 'trust',
    value: kind,
    'data-testid': `trust-${kind}`,
    onchange: () => renderAnchors(),
  });
  if (kind === 'none') input.checked = true;
  return h(
    'label',
    { class: 'radio' },
    input,
    tx('span', () => t(key)),
  );
}

function trustKind(): TrustKind {
  const checked = document.querySelector<HTMLInputElement>('input[name="trust"]:checked');
  return (checked?.value as TrustKind | undefined) ?? 'none';
}

/** The language switch, its accessible name in the current language. */
function langNav(attrs: Record<string, string>, ...children: Child[]): HTMLElement {
  const nav = h('nav', attrs, ...children);
  const set = () => nav.setAttribute('aria-label', t('lang.label'));
  set();
  texts.push(set);
  return nav;
}

function langButton(lang: Language): HTMLButtonElement {
  return tx('button', () => t(lang === 'pt' ? 'lang.pt' : 'lang.en'), {
    type: 'button',
    class: 'lang',
    'data-testid': `lang-${lang}`,
    onclick: () => setLanguage(lang),
  });
}

function buildForm(root: HTMLElement): void {
  const drop = h(
    'div',
    { class: 'drop', 'data-testid': 'drop' },
    tx('p', () => t('files.drop')),
    h(
      'p',
      {},
      h(
        'label',
        { class: 'button', for: 'files' },
        tx('span', () => t('files.pick')),
      ),
      ' ',
      tx('button', () => t('files.clear'), {
        type: 'button',
        'data-testid': 'clear',
        onclick: () => {
          state.files = [];
          state.result = null;
          renderFiles();
          renderResults();
        },
      }),
    ),
    fileInput,
    fileList,
  );
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    addFiles([...(e.dataTransfer?.files ?? [])]);
  });
  fileInput.addEventListener('change', () => {
    addFiles([...(fileInput.files ?? [])]);
    fileInput.value = '';
  });
  anchorInput.addEventListener('change', () => {
    state.anchorFiles = [...(anchorInput.files ?? [])].slice(0, MAX_ANCHOR_FILES);
    renderAnchors();
  });
  atInput.addEventListener('input', renderAt);
  runButton.addEventListener('click', () => void run());
  texts.push(() => {
    runButton.textContent = t('run.button');
  });

  root.append(
    h(
      'header',
      {},
      h(
        'div',
        {},
        tx('h1', () => t('page.title')),
        tx('p', () => t('page.intro')),
        tx('p', () => t('page.keep'), { class: 'muted small' }),
      ),
      langNav(
        {},
        langButton('pt'),
        langButton('en'),
        tx('span', () => t('page.version', { version: __NOTARY_VERIFY_VERSION__ }), {
          class: 'muted small',
          'data-testid': 'version',
        }),
      ),
    ),
    h(
      'section',
      { class: 'card' },
      tx('h2', () => t('files.title')),
      tx('p', () => t('files.help'), { class: 'muted small' }),
      drop,
    ),
    h(
      'section',
      { class: 'card' },
      tx('h2', () => t('endpoints.title')),
      tx('p', () => t('endpoints.help'), { class: 'muted small' }),
      h(
        'label',
        { class: 'field', for: 'evm' },
        tx('span', () => t('endpoints.evm')),
      ),
      evmInput,
      h(
        'label',
        { class: 'field', for: 'stacks' },
        tx('span', () => t('endpoints.stacks')),
      ),
      stacksInput,
      h(
        'label',
        { class: 'field', for: 'confirmations' },
        tx('span', () => t('endpoints.confirmations')),
      ),
      confirmationsInput,
    ),
    h(
      'section',
      { class: 'card' },
      tx('h2', () => t('trust.title')),
      tx('p', () => t('trust.help'), { class: 'muted small' }),
      h(
        'fieldset',
        {},
        trustRadio('none', 'trust.none'),
        trustRadio('icp-brasil', 'trust.icpBrasil'),
        trustRadio('files', 'trust.files'),
      ),
      h(
        'div',
        { class: 'anchors', 'data-testid': 'anchors' },
        h(
          'label',
          { class: 'button', for: 'anchors' },
          tx('span', () => t('trust.pick')),
        ),
        anchorInput,
        tx('p', () => t('trust.filesHint', { max: MAX_ANCHOR_FILES }), { class: 'muted small' }),
        anchorList,
      ),
      h(
        'label',
        { class: 'field', for: 'at' },
        tx('span', () => t('trust.at')),
      ),
      atInput,
      atHelp,
    ),
    h('div', { class: 'actions' }, runButton, status),
    results,
  );
}

function addFiles(files: File[]): void {
  const names = new Set(state.files.map((f) => f.name));
  for (const file of files) {
    if (names.has(file.name)) state.files = state.files.filter((f) => f.name !== file.name);
    state.files.push(file);
    names.add(file.name);
  }
  state.result = null;
  renderFiles();
  renderResults();
}

function setLanguage(lang: Language): void {
  state.lang = lang;
  document.documentElement.lang = lang === 'pt' ? 'pt-BR' : 'en';
  document.title = t('page.title');
  for (const set of texts) set();
  for (const button of document.querySelectorAll<HTMLButtonElement>('button.lang')) {
    button.setAttribute('aria-pressed', String(button.dataset.testid === `lang-${lang}`));
  }
  renderFiles();
  renderAnchors();
  renderAt();
  renderStatus();
  renderResults();
}

function renderFiles(): void {
  fileList.replaceChildren(
    ...(state.files.length === 0
      ? [h('li', { class: 'muted' }, t('files.none'))]
      : [
          h(
            'li',
            { class: 'muted' },
            state.files.length === 1
              ? t('files.count.one')
              : t('files.count.other', { n: state.files.length }),
          ),
          ...state.files.map((f) =>
            h(
              'li',
              {},
              h('code', {}, f.name),
              ` · ${formatBytes(f.size, state.lang === 'pt' ? 'pt-BR' : 'en-US')}`,
            ),
          ),
        ]),
  );
}

function renderAnchors(): void {
  const shown = trustKind() === 'files';
  document.querySelector('[data-testid="anchors"]')?.classList.toggle('hidden', !shown);
  anchorList.textContent =
    state.anchorFiles.length > 0
      ? t('trust.chosen', { names: state.anchorFiles.map((f) => f.name).join(', ') })
      : '';
}

function renderAt(): void {
  const at = localDateTime(atInput.value);
  atHelp.textContent = at
    ? t('trust.atUtc', { at: formatBrasiliaAndUtc(at, state.lang) })
    : t('trust.atHelp');
}

function renderStatus(): void {
  runButton.disabled = state.running !== null;
  status.classList.toggle('problem', state.error !== null);
  status.textContent = state.running
    ? t('run.progress', state.running)
    : state.error
      ? t(state.error.key, state.error.params)
      : '';
}

// ---- Running ----

/** One endpoint per line (or comma-separated), without trailing slash, duplicates dropped. */
function endpoints(text: string): string[] {
  const urls: string[] = [];
  for (const raw of text.split(/[\n,]/)) {
    const value = raw.trim().replace(/\/+$/, '');
    if (value === '') continue;
    const problem = endpointProblem(value);
    if (problem) throw new PageProblem(`run.badEndpoint.${problem}`, { value });
    if (!urls.includes(value)) urls.push(value);
  }
  return urls.slice(0, MAX_ENDPOINTS);
}

/** Something the user can fix before anything is checked (a refused endpoint, an unusable anchor file). */
class PageProblem extends Error {
  readonly key: MessageKey;
  readonly params: Record<string, string | number>;
  constructor(key: MessageKey, params: Record<string, string | number> = {}) {
    super(key);
    this.key = key;
    this.params = params;
  }
}

async function anchors(): Promise<Uint8Array[] | null> {
  const kind = trustKind();
  if (kind === 'none') return null;
  if (kind === 'icp-brasil') return ICP_BRASIL_ROOTS_PEM.flatMap((pem) => pemCertificates(pem));
  if (state.anchorFiles.length === 0) throw new PageProblem('run.noAnchorFiles');
  const out: Uint8Array[] = [];
  for (const file of state.anchorFiles) {
    if (file.size > MAX_ANCHOR_FILE_BYTES)
      throw new PageProblem('run.badAnchor.too-large', { name: file.name });
    let certs: Uint8Array[];
    try {
      certs = pemCertificates(await file.text());
    } catch {
      throw new PageProblem('run.badAnchor.no-certificate', { name: file.name });
    }
    // A certificate is a DER SEQUENCE (X.690 8.9): anything else only looks like PEM.
    if (certs.length === 0 || certs.some((der) => der.length < 2 || der[0] !== 0x30)) {
      throw new PageProblem('run.badAnchor.no-certificate', { name: file.name });
    }
    out.push(...certs);
    if (out.length > MAX_ANCHOR_CERTIFICATES) {
      throw new PageProblem('run.badAnchor.too-many', { max: MAX_ANCHOR_CERTIFICATES });
    }
  }
  return out;
}

async function run(): Promise<void> {
  state.error = null;
  state.result = null;
  renderResults();
  try {
    if (state.files.length === 0) throw new PageProblem('run.noFiles');
    const evmRpcUrls = endpoints(evmInput.value);
    const stacksApiUrls = endpoints(stacksInput.value);
    const confirmations = Number(confirmationsInput.value || '1');
    if (!Number.isInteger(confirmations) || confirmations < 1) throw new PageProblem('run.badConfirmations');
    const trusted = await anchors();
    const at = localDateTime(atInput.value);
    const files = new Map(state.files.map((f) => [f.name, f]));
    const read = async (name: string) => new Uint8Array(await (files.get(name) as File).arrayBuffer());
    // A capture is checked on its own; every other file goes to the batch, which pairs it with its proof.
    const captures = state.files.filter((f) => isWacz(f.name));
    const others = state.files.filter((f) => !isWacz(f.name));
    state.running = { done: 0, total: captures.length };
    renderStatus();
    let batch: BatchResult | null = null;
    if (others.length > 0) {
      batch = await verifyBatch(
        { entries: others.map((f) => ({ name: f.name, size: f.size })), read },
        {
          evmRpcUrls,
          stacksApiUrls,
          confirmations,
          ...(trusted ? { trustCa: trusted, tsaCa: trusted } : {}),
          ...(at ? { at } : {}),
        },
        {
          pairLeftovers: true,
          onItem: (_item, done, total) => {
            state.running = { done, total: total + captures.length };
            renderStatus();
          },
        },
      );
    }
    const checked = batch?.items.length ?? 0;
    const captureItems = await verifyCaptures(
      captures.map((f) => ({ name: f.name, size: f.size })),
      read,
      trusted ? { trustCa: trusted, tsaCa: trusted } : {},
      () => {
        const done = (state.running?.done ?? checked) + 1;
        state.running = { done, total: checked + captures.length };
        renderStatus();
      },
    );
    const chains = await verifyCertidoes(
      others.map((f) => ({ name: f.name, size: f.size })),
      read,
    );
    state.result = pageResult(batch, captureItems, chains);
  } catch (e) {
    state.error =
      e instanceof PageProblem
        ? { key: e.key, params: e.params }
        : { key: 'run.error', params: { message: errorMessage(e) } };
  } finally {
    state.running = null;
    renderStatus();
    renderResults();
  }
}

// ---- Results ----

function renderResults(): void {
  const result = state.result;
  if (!result) {
    results.replaceChildren();
    return;
  }
  const c = result.counts;
  results.replaceChildren(
    h(
      'div',
      {
        class: `summary outcome-${result.outcome}`,
        'data-testid': 'summary',
        'data-outcome': result.outcome,
        'data-exit-code': String(result.exitCode),
      },
      h('h2', {}, t('result.title')),
      h(
        'p',
        {},
        t('result.tally', {
          checked: result.items.length + result.captures.length + result.chains.length,
          passed: c.passed,
          failed: c.failed,
          incomplete: c.incomplete,
          unusable: c.unusable,
          skipped: result.skipped.length,
        }),
      ),
      h('p', { class: 'muted small' }, t('result.exit', { code: result.exitCode })),
      h(
        'p',
        {},
        download(t('result.csv'), 'notary-verify.csv', 'text/csv;charset=utf-8', pageCsv(result), 'csv'),
        ' ',
        download(
          t('result.json'),
          'notary-verify.json',
          'application/json',
          `${JSON.stringify(result, null, 2)}\n`,
          'json',
        ),
      ),
    ),
    ...result.items.map(itemCard),
    ...result.captures.map(captureCard),
    ...result.chains.map(chainCard),
    ...(result.skipped.length > 0
      ? [
          h(
            'div',
            { class: 'card', 'data-testid': 'skipped' },
            h('h3', {}, t('result.skipped')),
            h(
              'ul',
              {},
              ...result.skipped.map((s) => h('li', {}, t(`result.skipped.${s.why}`, { name: s.name }))),
            ),
          ),
        ]
      : []),
  );
}

function download(label: string, name: string, type: string, content: string, id: string): HTMLAnchorElement {
  const a = h('a', { class: 'button', download: name, 'data-testid': `download-${id}` }, label);
  a.href = URL.createObjectURL(new Blob([content], { type }));
  return a;
}

function itemCard(item: BatchItem): HTMLElement {
  const report = item.report;
  const proof =
    item.proofKind === 'stamped-certificate'
      ? t('item.proof.stamped-certificate')
      : t(`item.proof.${item.proofKind}`, { name: item.proof });
  return cardShell(item, report?.failedAt ?? null, proof, report ? reportView(report) : problemView(item));
}

/**
 * One file's card, for a file with its proof and for a capture alike: the outcome badge, the file's name, what
 * it was checked against, then `body`. The data attributes carry the outcome and the CLI's exit status.
 */
function cardShell(
  item: { file: string; outcome: BatchOutcome; exitCode: number },
  failedAt: number | null,
  proof: string,
  body: HTMLElement,
  kind?: 'wacz' | 'chain',
): HTMLElement {
  return h(
    'article',
    {
      class: `card item outcome-${item.outcome}`,
      'data-testid': 'item',
      ...(kind ? { 'data-kind': kind } : {}),
      'data-file': item.file,
      'data-outcome': item.outcome,
      'data-exit-code': String(item.exitCode),
      'data-failed-at': String(failedAt ?? ''),
    },
    h(
      'div',
      { class: 'item-head' },
      h('span', { class: `badge badge-${item.outcome}` }, t(`outcome.${item.outcome}`)),
      h('strong', { class: 'break' }, item.file),
      h('span', { class: 'muted small break' }, proof),
    ),
    body,
  );
}

function problemView(item: BatchItem): HTMLElement {
  return h(
    'div',
    { class: 'problem', role: 'alert' },
    h('p', {}, t(`item.problem.${item.problemKind ?? 'unreadable'}`)),
    item.problem
      ? h(
          'p',
          { class: 'muted small break' },
          t('item.problem.detail', { message: withBrasiliaTimes(item.problem, state.lang) }),
        )
      : null,
  );
}

/** The receipt's notarial act (version 2), when it has one: type, selo, book and page, the MNE's check. */
function actFacts(report: VerifyReport): HTMLElement[] {
  const act = report.act;
  if (!act) return [];
  const facts = [
    h('dt', {}, t('item.act')),
    h(
      'dd',
      {},
      t('item.act.value', {
        type: act.type,
        selo: act.selo ? `${act.selo.state} ${act.selo.code}` : '—',
        bookPage: [act.book, act.page].filter((x) => x).join(', ') || '—',
      }),
    ),
  ];
  if (act.mne && act.mneCheck) {
    facts.push(
      h('dt', {}, t('item.mne')),
      h(
        'dd',
        {},
        h('code', {}, act.mne),
        ' ',
        act.mneCheck.valid
          ? t('item.mne.valid', { date: act.mneCheck.date })
          : t('item.mne.invalid', {
              problem: textOf(act.mneCheck.problemMessage, act.mneCheck.problem, state.lang),
            }),
      ),
    );
  }
  return facts;
}

function reportView(report: VerifyReport): HTMLElement {
  const help =
    report.outcome === 'failed'
      ? t('outcome.help.failed', { id: report.failedAt ?? '' })
      : t(`outcome.help.${report.outcome}`);
  return h(
    'div',
    {},
    h('p', { class: 'small' }, help),
    h(
      'dl',
      { class: 'facts small' },
      h('dt', {}, t('item.serial')),
      h('dd', {}, h('code', {}, report.document.serialNumber)),
      h('dt', {}, t('item.sha256')),
      h('dd', {}, h('code', { class: 'break' }, report.document.sha256)),
      h('dt', {}, t('item.service')),
      h('dd', {}, `${report.service.name} (${report.service.url})`),
      ...actFacts(report),
    ),
    h('ol', { class: 'checks' }, ...report.checks.map((c) => checkRow(c, t(`check.${c.id}`)))),
  );
}

function captureCard(item: CaptureItem): HTMLElement {
  const report = item.report;
  return cardShell(
    item,
    report?.failedAt ?? null,
    t('capture.proof'),
    report
      ? captureView(item.file, report)
      : h(
          'div',
          { class: 'problem', role: 'alert' },
          h('p', {}, t(`capture.problem.${item.problemKind ?? 'unreadable'}`)),
          item.problem
            ? h(
                'p',
                { class: 'muted small break' },
                t('item.problem.detail', { message: withBrasiliaTimes(item.problem, state.lang) }),
              )
            : null,
          h('p', { class: 'muted small' }, t('capture.exit', { name: item.file, code: item.exitCode })),
        ),
    'wacz',
  );
}

/**
 * A certidão de permanência's run chain, as `notary-verify chain` checks it: the monitoring, one line per run
 * with whether its link holds, the breaks, the verdict; every text a message code rendered in the page's language.
 */
function chainCard(item: ChainItem): HTMLElement {
  const m = chainMessages(item.report);
  const text = (message: Message) => render(message, state.lang);
  return cardShell(
    item,
    null,
    text(msg('chain.proof')),
    h(
      'div',
      { 'data-testid': 'chain' },
      h('p', { 'data-testid': 'chain-summary', class: 'break' }, text(m.summary)),
      h(
        'ol',
        { class: 'checks' },
        ...m.runs.map((r) =>
          h(
            'li',
            { 'data-testid': 'chain-run', 'data-run': String(r.run), 'data-holds': String(r.holds) },
            h('span', { class: 'break' }, withBrasiliaTimes(text(r.line), state.lang)),
            ' · ',
            h('strong', {}, text(msg(r.holds ? 'chain.link.ok' : 'chain.link.break'))),
          ),
        ),
      ),
      ...m.breaks.map((b) => h('p', { class: 'problem break', 'data-testid': 'chain-break' }, text(b))),
      h('p', { 'data-testid': 'chain-verdict' }, h('strong', {}, text(m.verdict))),
      h('p', { class: 'muted small' }, t('chain.exit', { name: item.file, code: item.exitCode })),
    ),
    'chain',
  );
}

/** A capture's report: what the archive and the capture record say, then the seven checks. */
function captureView(file: string, report: WaczReport): HTMLElement {
  const a = report.archive;
  const k = report.capture;
  const help =
    report.outcome === 'failed'
      ? t('capture.help.failed', { id: report.failedAt ?? '' })
      : t(`outcome.help.${report.outcome}`);
  const fact = (label: string, value: Child, testid: string): HTMLElement[] => [
    h('dt', {}, label),
    h('dd', { 'data-testid': testid }, value),
  ];
  const signed =
    a.form === null
      ? t('capture.unsigned')
      : t(`capture.signed.${a.form}`, { signer: a.signer ?? '?', created: when(a.created) });
  return h(
    'div',
    {},
    h('p', { class: 'small' }, help),
    h(
      'p',
      { class: 'muted small', 'data-testid': 'exit-line' },
      t('capture.exit', { name: file, code: report.exitCode }),
    ),
    h(
      'dl',
      { class: 'facts small', 'data-testid': 'capture-facts' },
      ...fact(t('capture.sha256'), h('code', { class: 'break' }, a.sha256), 'fact-sha256'),
      ...fact(t('capture.signature'), h('span', { class: 'break' }, signed), 'fact-signature'),
      ...(a.form === 'domain'
        ? fact(
            t('capture.timeSignature'),
            a.timeSignature ? when(a.timeSignature) : t('capture.noTimeSignature'),
            'fact-time-signature',
          )
        : []),
      ...(k
        ? [
            ...fact(t('capture.url'), h('code', { class: 'break' }, k.requestedUrl), 'fact-url'),
            ...fact(
              t('capture.finalUrl'),
              h(
                'code',
                { class: 'break' },
                t('capture.status', { url: k.finalUrl, status: k.status ?? '?' }),
              ),
              'fact-final-url',
            ),
            ...fact(
              t('capture.time'),
              t('capture.span', { from: when(k.startedAt), to: when(k.finishedAt) }),
              'fact-time',
            ),
            ...(k.title ? fact(t('capture.title'), k.title, 'fact-title') : []),
            ...(k.serverIp ? fact(t('capture.server'), h('code', {}, k.serverIp), 'fact-server') : []),
            ...fact(
              t('capture.tls'),
              h(
                'span',
                { class: 'break' },
                k.tls
                  ? t('capture.tlsValue', {
                      subject: k.tls.subject,
                      issuer: k.tls.issuer,
                      from: when(k.tls.validFrom),
                      to: when(k.tls.validTo),
                      sha256: k.tls.sha256Fingerprint,
                    })
                  : t('capture.noTls'),
              ),
              'fact-tls',
            ),
          ]
        : []),
    ),
    h('ol', { class: 'checks' }, ...report.checks.map((c) => checkRow(c, t(`wacz.check.${c.id}`)))),
  );
}

function checkRow(check: CheckResult | WaczCheckResult, name: string): HTMLElement {
  const reason = check.reason ? ` · ${t(`reason.${check.reason}`)}` : '';
  return h(
    'li',
    {
      class: `check check-${check.status}`,
      'data-testid': `check-${check.id}`,
      'data-status': check.status,
      'data-reason': check.reason ?? '',
    },
    h(
      'div',
      { class: 'check-head' },
      h('span', { class: `badge badge-check-${check.status}` }, `${t(`status.${check.status}`)}${reason}`),
      h('strong', {}, `${check.id}. ${name}`),
    ),
    h(
      'p',
      { class: 'small summary-line', 'data-testid': 'summary-line' },
      rt(check.summaryMessage, check.summary),
    ),
    'pades' in check && check.pades
      ? h(
          'p',
          { class: 'small', 'data-testid': 'pades-level', 'data-level': check.pades.level ?? '' },
          t('check.level', { level: check.pades.level ?? '—', at: when(check.pades.at) }),
          check.pades.notHigher.length > 0
            ? h(
                'span',
                { class: 'muted' },
                ` · ${t('check.notHigher', { why: notHigher(check.pades).join('; ') })}`,
              )
            : null,
        )
      : null,
    'pades' in check && check.pades?.signers && check.pades.signers.length > 1
      ? signerList(check.pades.signers, check.pades.at)
      : null,
    check.evidence.length > 0
      ? h(
          'details',
          {},
          h('summary', { class: 'small' }, t('check.evidence')),
          h(
            'ul',
            { class: 'evidence' },
            ...check.evidence.map((e) =>
              h(
                'li',
                { class: e.ok === false ? 'bad' : e.ok ? 'ok' : 'info', 'data-testid': 'evidence' },
                h('span', { class: 'label' }, rt(e.labelMessage, e.label)),
                ' ',
                h('code', { class: 'break' }, rt(e.valueMessage, e.value)),
                e.source ? h('span', { class: 'muted' }, ` · ${renderSource(e.source, state.lang)}`) : null,
              ),
            ),
          ),
        )
      : null,
  );
}

// ---- Helpers ----

/**
 * Check 6's signers (the service's signature and the tabelião's), oldest first: each one's verdict, name,
 * policy, level and certificate subject.
 */
function signerList(signers: readonly PadesSignerReport[], at: string): HTMLElement {
  return h(
    'ul',
    { class: 'evidence', 'data-testid': 'pades-signers' },
    ...signers.map((s) =>
      h(
        'li',
        {
          class: s.status === 'failed' ? 'bad' : 'ok',
          'data-testid': 'pades-signer',
          'data-status': s.status,
        },
        h('span', { class: `badge badge-check-${s.status}` }, t(`status.${s.status}`)),
        ' ',
        h('strong', {}, s.name ?? '—'),
        s.policy ? ` · ${s.policy}` : '',
        ` · ${t('check.level', { level: s.level ?? '—', at: when(at) })}`,
        s.subject ? h('span', { class: 'muted' }, ` · ${s.subject}`) : null,
      ),
    ),
  );
}

/** Why check 6 does not reach the next PAdES level, each reason in the page's language. */
function notHigher(pades: NonNullable<CheckResult['pades']>): string[] {
  return pades.notHigher.map((text, i) => rt(pades.notHigherMessages?.[i], text));
}

/** The Date of a `datetime-local` value (this computer's time zone); null when empty or not a date. */
function localDateTime(value: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

const root = document.getElementById('app');
if (root) {
  buildForm(root);
  setLanguage(state.lang);
}
