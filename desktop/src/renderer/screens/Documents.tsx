import type { DocumentDto } from '@notary/shared';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { cidOfSource } from '../../common/cid';
import { useApp } from '../app-context';
import { formatBytes, formatDate, formatDateTime, overallStatus, shorten } from '../format';
import { useI18n } from '../i18n';
import { navigate } from '../router';
import { ErrorNotice, Icon, PageHeader, Spinner, StatusBadge } from '../ui';
import { tenantName } from './tenant';

type Filter = 'all' | 'pending' | 'registered';

/** How often the list refreshes while some document is still being anchored (ms). */
const LIVE_REFRESH_MS = 3000;

/**
 * Whether a document matches the search text: file name, serial number, hash, or the CID of an IPFS import
 * (any part, any case).
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

/** The active tenant's documents: search, status filter, live status while anchoring. */
export function Documents() {
  const { t, language } = useI18n();
  const { bridge, session } = useApp();
  const [docs, setDocs] = useState<DocumentDto[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [query, setQuery] = useState('');
  const [filter, setFilter] = useState<Filter>('all');
  const [loading, setLoading] = useState(false);

  const load = useCallback(async () => {
    setLoading(true);
    try {
      setDocs(await bridge.listDocuments());
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  }, [bridge]);

  useEffect(() => {
    void load();
  }, [load]);

  const anyPending = docs?.some((d) => overallStatus(d) !== 'registered') ?? false;
  useEffect(() => {
    if (!anyPending || error) return;
    const timer = setInterval(() => void load(), LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [anyPending, error, load]);

  const shown = useMemo(
    () =>
      (docs ?? []).filter((d) => {
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
              onClick={() => void load()}
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
            {t(shown.length === 1 ? 'docs.count.one' : 'docs.count.other', { n: shown.length })}
          </span>
        )}
      </div>
      {error !== null && <ErrorNotice error={error} onRetry={() => void load()} />}
      {docs === null && error === null ? (
        <div className="loading">
          <Spinner /> {t('common.loading')}
        </div>
      ) : docs && docs.length === 0 ? (
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
                        <div className="muted small">{formatBytes(d.fileSize, language)}</div>
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
