import { LIMITS } from '@notary/shared';
import { useState, useSyncExternalStore } from 'react';
import { useApp } from '../app-context';
import { captureErrorText, captureRecord, captureRequest, captureUrlProblemText } from '../capture';
import { formatSize, overallStatus } from '../format';
import { useI18n } from '../i18n';
import { cidProblemText, ipfsImportErrorText, ipfsRequest } from '../ipfs';
import { navigate } from '../router';
import { DropZone, ErrorNotice, Icon, Notice, PageHeader, ProgressBar, Spinner, StatusBadge } from '../ui';
import { type QueueItem, sendable } from '../upload-queue';
import { IntakeForm } from './IntakeForm';

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
            <span className="muted small">{formatSize(item.file.size, language)}</span>
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
  return (
    <IntakeForm
      readerOnly={readerOnly}
      onClose={onClose}
      texts={{
        prefix: 'ipfs',
        formTestId: 'ipfs-import',
        title: t('ipfs.title'),
        help: t('ipfs.help'),
        source: {
          key: 'cid',
          label: t('ipfs.cid'),
          hint: t('ipfs.cidHint'),
          placeholder: t('ipfs.cidPlaceholder'),
          maxLength: 400,
          autoComplete: 'off',
        },
        nameLabel: t('ipfs.name'),
        namePlaceholder: t('ipfs.namePlaceholder'),
        consentTitle: t('ipfs.consent'),
        consentText: t('ipfs.consentText'),
        submit: t('ipfs.submit'),
        submitIcon: 'notarize',
        busy: t('ipfs.importing'),
      }}
      check={({ source, name, consent }) => {
        const check = ipfsRequest({ cid: source, name, consent });
        return check.ok ? check : { ok: false, problem: cidProblemText(t, check.cid) };
      }}
      send={(request) => bridge.importIpfs(request)}
      errorText={(error) => ipfsImportErrorText(t, error, settings.serverUrl)}
      renderDone={(done) => (
        <div data-testid="ipfs-done">
          <DoneNotice text={t('ipfs.done', { serial: done.serialNumber })} id={done.id} />
        </div>
      )}
    />
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
  return (
    <IntakeForm
      readerOnly={readerOnly}
      onClose={onClose}
      texts={{
        prefix: 'capture',
        formTestId: 'capture-web',
        title: t('capture.title'),
        help: t('capture.help'),
        source: {
          key: 'url',
          label: t('capture.url'),
          hint: t('capture.urlHint'),
          placeholder: t('capture.urlPlaceholder'),
          maxLength: 8192,
          type: 'url',
          autoComplete: 'url',
        },
        nameLabel: t('capture.name'),
        namePlaceholder: t('capture.namePlaceholder'),
        consentTitle: t('capture.consent'),
        consentText: t('capture.consentText'),
        submit: t('capture.submit'),
        submitIcon: 'globe',
        busy: t('capture.capturing'),
      }}
      check={({ source, name, consent }) => {
        const check = captureRequest({ url: source, name, consent });
        return check.ok ? check : { ok: false, problem: captureUrlProblemText(t, check.url) };
      }}
      send={(request) => bridge.captureWeb(request)}
      errorText={(error) => captureErrorText(t, error, settings.serverUrl)}
      renderDone={(done) => {
        const record = captureRecord(done);
        if (!record) return null;
        return (
          <div className="capture-record" data-testid="capture-done">
            <DoneNotice text={t('capture.done', { serial: record.serial })} id={done.id} />
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
        );
      }}
    />
  );
}

/** "Registered as <serial>" with a link to the new document. */
function DoneNotice({ text, id }: { text: string; id: string }) {
  const { t } = useI18n();
  return (
    <Notice kind="ok">
      {text}{' '}
      <button type="button" className="link-button" onClick={() => navigate({ name: 'document', id })}>
        {t('notarize.open')}
      </button>
    </Notice>
  );
}
