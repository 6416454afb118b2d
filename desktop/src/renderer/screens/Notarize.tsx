import { type DocumentDto, LIMITS } from '@notary/shared';
import { type FormEvent, useId, useState, useSyncExternalStore } from 'react';
import { useApp } from '../app-context';
import { captureErrorText, captureRecord, captureRequest, captureUrlProblemText } from '../capture';
import { formatBytes, overallStatus } from '../format';
import { useI18n } from '../i18n';
import { cidProblemText, ipfsImportErrorText, ipfsRequest } from '../ipfs';
import { navigate } from '../router';
import { DropZone, ErrorNotice, Icon, Notice, PageHeader, ProgressBar, Spinner, StatusBadge } from '../ui';
import { type QueueItem, sendable } from '../upload-queue';

/**
 * Drop or pick files -> local SHA-256 with progress -> public verify (already notarized: its record, no
 * upload) -> LGPD consent (per file or for the batch) -> upload queue with progress and cancel. Beside the
 * picker, "Import from IPFS": a CID (checked locally), an optional name and the same consent; and "Capture a
 * web page": an http(s) address (checked locally), an optional name and the consent.
 */
export function Notarize() {
  const { t } = useI18n();
  const { bridge, queue, session } = useApp();
  const items = useSyncExternalStore(queue.subscribe, queue.snapshot);
  const readerOnly = session?.me.role === 'reader';
  const [ipfsOpen, setIpfsOpen] = useState(false);
  const [captureOpen, setCaptureOpen] = useState(false);

  const pick = async () => {
    try {
      queue.add(await bridge.pickFiles());
    } catch {
      // The picker itself cannot fail in a way the user can act on.
    }
  };
  const drop = async (files: File[]) => queue.add(await bridge.dropFiles(files));

  const candidates = items.filter(sendable);
  const consented = candidates.filter((i) => i.consent);
  const allConsented = candidates.length > 0 && consented.length === candidates.length;
  const hasFinished = items.some((i) => ['done', 'existing', 'cancelled'].includes(i.stage));

  return (
    <div className="page">
      <PageHeader title={t('notarize.title')} subtitle={t('notarize.subtitle')} />
      {readerOnly && (
        <div className="notice notice-warn" role="status">
          <Icon name="alert" />
          <div className="notice-body">{t('notarize.readerRole', { role: t('tenant.role.reader') })}</div>
        </div>
      )}
      <DropZone
        testId="dropzone"
        onFiles={(files) => void drop(files)}
        onPick={() => void pick()}
        title={t('notarize.drop')}
        hint={t('notarize.limit')}
        buttonLabel={t('notarize.pick')}
        secondary={[
          {
            label: t('ipfs.open'),
            onClick: () => setIpfsOpen((open) => !open),
            testId: 'ipfs-open',
            pressed: ipfsOpen,
          },
          {
            label: t('capture.open'),
            onClick: () => setCaptureOpen((open) => !open),
            testId: 'capture-open',
            pressed: captureOpen,
            icon: 'globe',
          },
        ]}
      />
      {ipfsOpen && <ImportIpfs readerOnly={readerOnly} onClose={() => setIpfsOpen(false)} />}
      {captureOpen && <CaptureWeb readerOnly={readerOnly} onClose={() => setCaptureOpen(false)} />}
      {items.length > 0 && (
        <div className="card queue" data-testid="upload-queue">
          <ul className="queue-list">
            {items.map((item) => (
              <QueueRow key={item.key} item={item} />
            ))}
          </ul>
          {candidates.length > 0 && (
            <div className="consent">
              <label className="checkbox">
                <input
                  type="checkbox"
                  data-testid="consent-all"
                  checked={allConsented}
                  disabled={candidates.length === 0}
                  onChange={(e) => queue.setConsentAll(e.target.checked)}
                />
                <span>
                  <strong>{t('notarize.consentAll')}</strong>
                  <span className="consent-text">{t('notarize.consentText')}</span>
                </span>
              </label>
            </div>
          )}
          <div className="queue-actions">
            {hasFinished && (
              <button type="button" className="button button-ghost" onClick={() => queue.clearFinished()}>
                {t('notarize.clearDone')}
              </button>
            )}
            <span className="spacer" />
            {candidates.length > 0 && consented.length === 0 && (
              <span className="muted small">{t('notarize.needConsent')}</span>
            )}
            {candidates.length > 0 && (
              <button
                type="button"
                className="button button-primary"
                data-testid="submit-upload"
                disabled={consented.length === 0 || readerOnly}
                onClick={() => queue.submit()}
              >
                <Icon name="notarize" size={16} />{' '}
                {t(consented.length > 1 ? 'notarize.submit.other' : 'notarize.submit.one', {
                  n: consented.length,
                })}
              </button>
            )}
          </div>
        </div>
      )}
    </div>
  );
}

function QueueRow({ item }: { item: QueueItem }) {
  const { t, language } = useI18n();
  const { queue } = useApp();
  const tooLarge = item.file.size > LIMITS.maxUploadBytes;
  const stageText = (() => {
    switch (item.stage) {
      case 'hashing':
        return t('notarize.stage.hashing', { pct: item.progress });
      case 'checking':
        return t('notarize.stage.checking');
      case 'existing':
        return t('notarize.stage.existing', { serial: item.existing?.serialNumber ?? '' });
      case 'ready':
        return tooLarge ? t('notarize.tooLarge') : t('notarize.stage.ready');
      case 'queued':
        return t('notarize.stage.queued');
      case 'uploading':
        return t('notarize.stage.uploading', { pct: item.progress });
      case 'done':
        return t('notarize.stage.done', { serial: item.doc?.serialNumber ?? '' });
      case 'cancelled':
        return t('notarize.stage.cancelled');
      default:
        return t('notarize.stage.error');
    }
  })();
  const running = item.stage === 'hashing' || item.stage === 'uploading';
  return (
    <li className={`queue-item queue-${item.stage}`} data-testid="queue-item" data-stage={item.stage}>
      <div className="queue-main">
        <Icon name="file" size={20} />
        <div className="queue-info">
          <div className="queue-title">
            <span className="file-name" title={item.file.name}>
              {item.file.name}
            </span>
            <span className="muted small">{formatBytes(item.file.size, language)}</span>
          </div>
          <div className="queue-stage" data-testid="queue-stage">
            {(item.stage === 'checking' || item.stage === 'queued') && <Spinner />}
            {item.stage === 'existing' && item.existing && (
              <StatusBadge status={overallStatus(item.existing)} />
            )}
            <span>{stageText}</span>
          </div>
          {running && <ProgressBar value={item.progress} label={stageText} />}
          {item.hash && <code className="queue-hash">{item.hash}</code>}
          {item.stage === 'error' && item.error !== null && <ErrorNotice error={item.error} compact />}
        </div>
        <div className="queue-controls">
          {sendable(item) && (
            <label className="checkbox checkbox-inline" title={t('notarize.consentItem')}>
              <input
                type="checkbox"
                data-testid="consent-item"
                checked={item.consent}
                onChange={(e) => queue.setConsent(item.key, e.target.checked)}
              />
              <span className="small">{t('notarize.consentItem')}</span>
            </label>
          )}
          {item.stage === 'done' && item.doc && (
            <button
              type="button"
              className="button button-small"
              onClick={() => item.doc && navigate({ name: 'document', id: item.doc.id })}
            >
              {t('notarize.open')}
            </button>
          )}
          {(running || item.stage === 'queued') && (
            <button
              type="button"
              className="button button-small button-ghost"
              onClick={() => queue.cancel(item.key)}
            >
              {t('notarize.cancel')}
            </button>
          )}
          {(item.stage === 'error' || item.stage === 'cancelled') && (
            <button
              type="button"
              className="button button-small button-ghost"
              onClick={() => queue.retry(item.key)}
            >
              {t('notarize.retry')}
            </button>
          )}
          {!running && item.stage !== 'queued' && item.stage !== 'checking' && (
            <button
              type="button"
              className="icon-button"
              onClick={() => queue.remove(item.key)}
              title={t('notarize.remove')}
              aria-label={t('notarize.remove')}
            >
              <Icon name="x" size={16} />
            </button>
          )}
        </div>
      </div>
    </li>
  );
}

/**
 * "Import from IPFS": the CID is checked as typed (a sentence for each common mistake), the name is
 * optional (the server defaults it to the CID), and nothing is sent before the consent box is ticked.
 * The server fetches and verifies the file; this waits for its answer (no progress: no bytes travel here).
 */
function ImportIpfs({ readerOnly, onClose }: { readerOnly: boolean; onClose: () => void }) {
  const { t } = useI18n();
  const { bridge, settings } = useApp();
  const ids = useId();
  const [cid, setCid] = useState('');
  const [name, setName] = useState('');
  const [consent, setConsent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<DocumentDto | null>(null);
  const [error, setError] = useState<unknown>(null);

  const check = ipfsRequest({ cid, name, consent });
  // The sentence shows once something is typed: an empty field is not yet a mistake.
  const problem = !check.ok && cid.trim() ? cidProblemText(t, check.cid) : null;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!check.ok || busy || readerOnly) return;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const doc = await bridge.importIpfs(check.request);
      setDone(doc);
      // Consent is per file: the next import asks again.
      setCid('');
      setName('');
      setConsent(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card ipfs-import" data-testid="ipfs-import" onSubmit={(e) => void submit(e)}>
      <div className="section-title">
        <h2>{t('ipfs.title')}</h2>
        <span className="spacer" />
        <button
          type="button"
          className="icon-button"
          onClick={onClose}
          title={t('common.close')}
          aria-label={t('common.close')}
        >
          <Icon name="x" size={16} />
        </button>
      </div>
      <p className="muted small">{t('ipfs.help')}</p>
      <div className="form-grid">
        <label className="field" htmlFor={`${ids}-cid`}>
          <span>{t('ipfs.cid')}</span>
          <input
            id={`${ids}-cid`}
            className="cid-input"
            data-testid="ipfs-cid"
            value={cid}
            maxLength={400}
            spellCheck={false}
            autoComplete="off"
            autoCapitalize="off"
            placeholder={t('ipfs.cidPlaceholder')}
            aria-invalid={problem !== null}
            aria-describedby={`${ids}-cid-help`}
            onChange={(e) => setCid(e.target.value)}
          />
          <span
            id={`${ids}-cid-help`}
            className={problem ? 'field-problem' : 'field-hint'}
            data-testid="ipfs-cid-help"
          >
            {problem ?? t('ipfs.cidHint')}
          </span>
        </label>
        <label className="field" htmlFor={`${ids}-name`}>
          <span>{t('ipfs.name')}</span>
          <input
            id={`${ids}-name`}
            data-testid="ipfs-name"
            value={name}
            maxLength={255}
            placeholder={t('ipfs.namePlaceholder')}
            onChange={(e) => setName(e.target.value)}
          />
        </label>
      </div>
      <div className="consent">
        <label className="checkbox">
          <input
            type="checkbox"
            data-testid="ipfs-consent"
            checked={consent}
            onChange={(e) => setConsent(e.target.checked)}
          />
          <span>
            <strong>{t('ipfs.consent')}</strong>
            <span className="consent-text">{t('ipfs.consentText')}</span>
          </span>
        </label>
      </div>
      {readerOnly && (
        <Notice kind="warn">{t('notarize.readerRole', { role: t('tenant.role.reader') })}</Notice>
      )}
      {error !== null && (
        <ErrorNotice error={error} compact headline={ipfsImportErrorText(t, error, settings.serverUrl)} />
      )}
      {done && (
        <div data-testid="ipfs-done">
          <Notice kind="ok">
            {t('ipfs.done', { serial: done.serialNumber })}{' '}
            <button
              type="button"
              className="link-button"
              onClick={() => navigate({ name: 'document', id: done.id })}
            >
              {t('notarize.open')}
            </button>
          </Notice>
        </div>
      )}
      <div className="ipfs-import-actions">
        {busy && (
          <span className="muted small">
            <Spinner /> {t('ipfs.importing')}
          </span>
        )}
        <span className="spacer" />
        {!consent && cid.trim() !== '' && !problem && (
          <span className="muted small">{t('notarize.needConsent')}</span>
        )}
        <button
          type="submit"
          className="button button-primary"
          data-testid="ipfs-submit"
          disabled={!check.ok || busy || readerOnly}
        >
          {busy ? <Spinner /> : <Icon name="notarize" size={16} />} {t('ipfs.submit')}
        </button>
      </div>
    </form>
  );
}

/**
 * "Capture a web page": the address is checked as typed (http or https, no credentials: a sentence for each
 * mistake), the name is optional, and nothing is sent before the consent box is ticked. The server loads
 * and archives the page, which takes seconds: a spinner until it answers, then the record (serial, the
 * page's address and its screenshot when the link is a plain http(s) one).
 */
function CaptureWeb({ readerOnly, onClose }: { readerOnly: boolean; onClose: () => void }) {
  const { t } = useI18n();
  const { bridge, settings } = useApp();
  const ids = useId();
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [consent, setConsent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<DocumentDto | null>(null);
  const [error, setError] = useState<unknown>(null);

  const check = captureRequest({ url, name, consent });
  // The sentence shows once something is typed: an empty field is not yet a mistake.
  const problem = !check.ok && url.trim() ? captureUrlProblemText(t, check.url) : null;
  const record = done ? captureRecord(done) : null;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!check.ok || busy || readerOnly) return;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const doc = await bridge.captureWeb(check.request);
      setDone(doc);
      // Consent is per capture: the next one asks again.
      setUrl('');
      setName('');
      setConsent(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card ipfs-import" data-testid="capture-web" onSubmit={(e) => void submit(e)}>
      <div className="section-title">
        <h2>{t('capture.title')}</h2>
        <span className="spacer" />
        <button
          type="button"
          className="icon-button"
          onClick={onClose}
          title={t('common.close')}
          aria-label={t('common.close')}
        >
          <Icon name="x" size={16} />
        </button>
      </div>
      <p className="muted small">{t('capture.help')}</p>
      <div className="form-grid">
        <label className="field" htmlFor={`${ids}-url`}>
          <span>{t('capture.url')}</span>
          <input
            id={`${ids}-url`}
            type="url"
            className="cid-input"
            data-testid="capture-url"
            value={url}
            maxLength={8192}
            spellCheck={false}
            autoComplete="url"
            autoCapitalize="off"
            placeholder={t('capture.urlPlaceholder')}
            aria-invalid={problem !== null}
            aria-describedby={`${ids}-url-help`}
            disabled={busy}
            onChange={(e) => setUrl(e.target.value)}
          />
          <span
            id={`${ids}-url-help`}
            className={problem ? 'field-problem' : 'field-hint'}
            data-testid="capture-url-help"
          >
            {problem ?? t('capture.urlHint')}
          </span>
        </label>
        <label className="field" htmlFor={`${ids}-name`}>
          <span>{t('capture.name')}</span>
          <input
            id={`${ids}-name`}
            data-testid="capture-name"
            value={name}
            maxLength={255}
            placeholder={t('capture.namePlaceholder')}
            disabled={busy}
            onChange={(e) => setName(e.target.value)}
          />
        </label>
      </div>
      <div className="consent">
        <label className="checkbox">
          <input
            type="checkbox"
            data-testid="capture-consent"
            checked={consent}
            disabled={busy}
            onChange={(e) => setConsent(e.target.checked)}
          />
          <span>
            <strong>{t('capture.consent')}</strong>
            <span className="consent-text">{t('capture.consentText')}</span>
          </span>
        </label>
      </div>
      {readerOnly && (
        <Notice kind="warn">{t('notarize.readerRole', { role: t('tenant.role.reader') })}</Notice>
      )}
      {error !== null && (
        <ErrorNotice error={error} compact headline={captureErrorText(t, error, settings.serverUrl)} />
      )}
      {done && record && (
        <div className="capture-record" data-testid="capture-done">
          <Notice kind="ok">
            {t('capture.done', { serial: record.serial })}{' '}
            <button
              type="button"
              className="link-button"
              onClick={() => navigate({ name: 'document', id: done.id })}
            >
              {t('notarize.open')}
            </button>
          </Notice>
          {record.pageUrl && (
            <p className="small">
              {t('capture.page')}: <code className="capture-url">{record.pageUrl}</code>
            </p>
          )}
          {record.screenshot ? (
            <img
              className="capture-screenshot"
              data-testid="capture-screenshot"
              src={record.screenshot}
              alt={t('capture.screenshot')}
              referrerPolicy="no-referrer"
            />
          ) : (
            <p className="muted small">{t('capture.noScreenshot')}</p>
          )}
        </div>
      )}
      <div className="ipfs-import-actions">
        {busy && (
          <span className="muted small" role="status" data-testid="capture-busy">
            <Spinner /> {t('capture.capturing')}
          </span>
        )}
        <span className="spacer" />
        {!consent && url.trim() !== '' && !problem && (
          <span className="muted small">{t('notarize.needConsent')}</span>
        )}
        <button
          type="submit"
          className="button button-primary"
          data-testid="capture-submit"
          disabled={!check.ok || busy || readerOnly}
        >
          {busy ? <Spinner /> : <Icon name="globe" size={16} />} {t('capture.submit')}
        </button>
      </div>
    </form>
  );
}
