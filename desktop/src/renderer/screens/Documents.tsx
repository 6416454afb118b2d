import { DOCUMENT_SEARCH_MIN_LENGTH, type DocumentDto } from '@notary/shared';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { cidOfSource } from '../../common/cid';
import { useApp } from '../app-context';
import { formatDate, formatDateTime, formatSize, overallStatus, shorten } from '../format';
import { useI18n } from '../i18n';
import { navigate } from '../router';
import { ErrorNotice, Icon, PageHeader, Spinner, StatusBadge } from '../ui';
import { tenantName } from './tenant';

type Filter = 'all' | 'pending' | 'registered';

/** How often the list refreshes while some document is still being anchored (ms). */
const LIVE_REFRESH_MS = 3000;
/** Documents asked per page (the server answers at most 100). */
export const PAGE_SIZE = 50;
/** Quiet time after the last keystroke before the search goes to the server (ms). */
const SEARCH_DEBOUNCE_MS = 300;

/**
 * Whether a document matches the search text: file name, serial number, hash, or the CID of an IPFS import
 * (any part, any case). Used on the loaded rows for texts too short for the server's search (1 or 2
 * characters); longer ones are searched by the server (`q`).
 */
export function matchesSearch(
  doc: Pick<DocumentDto, 'fileName' | 'serialNumber' | 'sha256Hash'> &
    Partial<Pick<DocumentDto, 'sourceType' | 'sourceUri'>>,
  query: string,
): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const cid = doc.sourceType
    ? cidOfSource({ sourceType: doc.sourceType, sourceUri: doc.sourceUri ?? null })
    : null;
  return (
    doc.fileName.toLowerCase().includes(q) ||
    doc.serialNumber.toLowerCase().includes(q) ||
    doc.sha256Hash.toLowerCase().includes(q) ||
    (cid?.toLowerCase().includes(q) ?? false)
  );
}

/** The search text the server is asked (`q`), or undefined when it is too short to search there. */
export function serverQuery(query: string): string | undefined {
  const q = query.trim();
  return q.length >= DOCUMENT_SEARCH_MIN_LENGTH ? q : undefined;
}

/**
 * The loaded list after a refresh of its first page: the fresh page, then the rows loaded before that come
 * after the fresh page's last one (newest first: `createdAt desc, id desc`), without duplicates. A refresh
 * thus updates the statuses at the top and keeps the pages loaded further down.
 */
export function mergeFirstPage<D extends Pick<DocumentDto, 'id' | 'createdAt'>>(
  fresh: D[],
  loaded: D[],
  freshIsWholeList: boolean,
): D[] {
  const last = fresh.at(-1);
  if (freshIsWholeList || !last) return fresh;
  const seen = new Set(fresh.map((d) => d.id));
  const after = (d: D) => d.createdAt < last.createdAt || (d.createdAt === last.createdAt && d.id < last.id);
  return [...fresh, ...loaded.filter((d) => !seen.has(d.id) && after(d))];
}

/**
 * The active tenant's documents, a page at a time ("load more"), searched on the server, with a status
 * filter over the loaded rows and live status while anchoring.
 */
export function Documents() {
  const { t, language } = useI18n();
  const { bridge, session } = useApp();
  const [docs, setDocs] = useState<DocumentDto[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [query, setQuery] = useState('');
  const [searched, setSearched] = useState<string | undefined>(undefined);
  const [filter, setFilter] = useState<Filter>('all');
  const [loading, setLoading] = useState(false);
  const [loadingMore, setLoadingMore] = useState(false);
  /** Bumped by every new first-page load: answers of an older search or refresh are dropped. */
  const generation = useRef(0);
  const loaded = useRef<{ docs: DocumentDto[]; cursor: string | null }>({ docs: [], cursor: null });

  useEffect(() => {
    const next = serverQuery(query);
    if (next === searched) return;
    const timer = setTimeout(() => setSearched(next), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query, searched]);

  /** Loads the first page; `keep` keeps the pages loaded below it (live refresh of the same search). */
  const load = useCallback(
    async (keep: boolean) => {
      const mine = ++generation.current;
      setLoading(true);
      try {
        const page = await bridge.listDocuments({ limit: PAGE_SIZE, ...(searched ? { q: searched } : {}) });
        if (mine !== generation.current) return;
        const before = loaded.current;
        const whole = page.nextCursor === null;
        const rows = keep ? mergeFirstPage(page.documents, before.docs, whole) : page.documents;
        const cursor =
          keep && !whole && rows.length > page.documents.length ? before.cursor : page.nextCursor;
        loaded.current = { docs: rows, cursor };
        setDocs(rows);
        setNextCursor(cursor);
        setError(null);
      } catch (e) {
        if (mine === generation.current) setError(e);
      } finally {
        if (mine === generation.current) setLoading(false);
      }
    },
    [bridge, searched],
  );

  const loadMore = useCallback(async () => {
    const cursor = loaded.current.cursor;
    if (!cursor) return;
    const mine = generation.current;
    setLoadingMore(true);
    try {
      const page = await bridge.listDocuments({
        limit: PAGE_SIZE,
        cursor,
        ...(searched ? { q: searched } : {}),
      });
      if (mine !== generation.current) return;
      const seen = new Set(loaded.current.docs.map((d) => d.id));
      const rows = [...loaded.current.docs, ...page.documents.filter((d) => !seen.has(d.id))];
      loaded.current = { docs: rows, cursor: page.nextCursor };
      setDocs(rows);
      setNextCursor(page.nextCursor);
    } catch (e) {
      if (mine === generation.current) setError(e);
    } finally {
      setLoadingMore(false);
    }
  }, [bridge, searched]);

  useEffect(() => {
    void load(false);
  }, [load]);

  const anyPending = docs?.some((d) => overallStatus(d) !== 'registered') ?? false;
  useEffect(() => {
    if (!anyPending || error) return;
    const timer = setInterval(() => void load(true), LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [anyPending, error, load]);

  const shown = useMemo(
    () =>
      (docs ?? []).filter((d) => {
        // The loaded rows are filtered here too: at once while the server's answer is awaited, and alone for a
        // text too short for the server (every server match also matches here).
        if (!matchesSearch(d, query)) return false;
        const status = overallStatus(d);
        if (filter === 'registered') return status === 'registered';
        if (filter === 'pending') return status !== 'registered';
        return true;
      }),
    [docs, query, filter],
  );

  return (
    <div className="page">
      <PageHeader
        title={t('docs.title')}
        subtitle={session ? t('docs.subtitle', { tenant: tenantName(t, session) }) : undefined}
        actions={
          <>
            <button
              type="button"
              className="button button-ghost"
              onClick={() => void load(false)}
              disabled={loading}
            >
              <Icon name="refresh" size={16} /> {t('docs.refresh')}
            </button>
            <button
              type="button"
              className="button button-primary"
              onClick={() => navigate({ name: 'notarize' })}
            >
              <Icon name="notarize" size={16} /> {t('nav.notarize')}
            </button>
          </>
        }
      />
      <div className="toolbar">
        <label className="search">
          <Icon name="search" size={16} />
          <input
            type="search"
            placeholder={t('docs.search')}
            aria-label={t('docs.search')}
            value={query}
            onChange={(e) => setQuery(e.target.value)}
          />
        </label>
        <div className="segmented" role="tablist">
          {(['all', 'pending', 'registered'] as const).map((f) => (
            <button
              key={f}
              type="button"
              role="tab"
              aria-selected={filter === f}
              className={filter === f ? 'active' : ''}
              onClick={() => setFilter(f)}
            >
              {t(`docs.filter.${f}`)}
            </button>
          ))}
        </div>
        {docs && (
          <span className="muted toolbar-count">
            {nextCursor
              ? t('docs.count.more', { n: shown.length })
              : t(shown.length === 1 ? 'docs.count.one' : 'docs.count.other', { n: shown.length })}
          </span>
        )}
      </div>
      {error !== null && <ErrorNotice error={error} onRetry={() => void load(false)} />}
      {docs === null && error === null ? (
        <div className="loading">
          <Spinner /> {t('common.loading')}
        </div>
      ) : docs && docs.length === 0 && !searched ? (
        <div className="empty card">
          <Icon name="documents" size={36} />
          <p>{t('docs.empty')}</p>
          <button
            type="button"
            className="button button-primary"
            onClick={() => navigate({ name: 'notarize' })}
          >
            {t('docs.emptyAction')}
          </button>
        </div>
      ) : docs ? (
        <div className="card table-card">
          <table className="table" data-testid="documents-table">
            <thead>
              <tr>
                <th>{t('docs.col.name')}</th>
                <th>{t('docs.col.serial')}</th>
                <th>{t('docs.col.hash')}</th>
                <th>{t('docs.col.date')}</th>
                <th>{t('docs.col.status')}</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((d) => (
                <tr
                  key={d.id}
                  tabIndex={0}
                  className="row-link"
                  data-testid="document-row"
                  onClick={() => navigate({ name: 'document', id: d.id })}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') navigate({ name: 'document', id: d.id });
                  }}
                >
                  <td>
                    <div className="cell-file">
                      <Icon name="file" size={16} />
                      <div>
                        <div className="file-name" title={d.fileName}>
                          {d.fileName}
                        </div>
                        <div className="muted small">{formatSize(d.fileSize, language)}</div>
                        <SourceLine doc={d} />
                      </div>
                    </div>
                  </td>
                  <td>
                    <code>{d.serialNumber}</code>
                  </td>
                  <td>
                    <code className="muted" title={d.sha256Hash}>
                      {shorten(d.sha256Hash, 8, 6)}
                    </code>
                  </td>
                  <td className="nowrap" title={formatDateTime(d.createdAt, language)}>
                    {formatDate(d.createdAt, language)}
                  </td>
                  <td>
                    <StatusBadge status={overallStatus(d)} />
                  </td>
                </tr>
              ))}
              {shown.length === 0 && (
                <tr>
                  <td colSpan={5} className="muted center">
                    {t('docs.noMatch')}
                  </td>
                </tr>
              )}
            </tbody>
          </table>
          {nextCursor && (
            <div className="center">
              <button
                type="button"
                className="button button-ghost"
                data-testid="load-more"
                onClick={() => void loadMore()}
                disabled={loadingMore}
              >
                {loadingMore ? <Spinner /> : null} {t('docs.loadMore')}
              </button>
            </div>
          )}
        </div>
      ) : null}
    </div>
  );
}

/**
 * Under a document's name: `IPFS` and the CID of an import, `Web` and the page's address of a capture
 * (nothing for uploads).
 */
function SourceLine({ doc }: { doc: DocumentDto }) {
  const { t } = useI18n();
  const cid = cidOfSource(doc);
  if (doc.sourceType === 'web-capture') {
    return (
      <div className="muted small" data-testid="document-web">
        <span className="source-badge">{t('docs.web')}</span>
        {doc.sourceUri && <code title={doc.sourceUri}>{shorten(doc.sourceUri, 28, 8)}</code>}
      </div>
    );
  }
  if (!cid) return null;
  return (
    <div className="muted small" data-testid="document-cid">
      <span className="source-badge">{t('docs.ipfs')}</span>
      <code title={cid}>{shorten(cid, 10, 6)}</code>
    </div>
  );
}
