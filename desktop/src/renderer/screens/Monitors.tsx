import type { MonitorDto, MonitorRunDto, MonitorSummaryDto } from '@notary/shared';
import { useCallback, useEffect, useId, useState } from 'react';
import { useApp } from '../app-context';
import { captureUrlProblemText } from '../capture';
import { formatDateTime, shorten } from '../format';
import { useI18n } from '../i18n';
import {
  type DurationUnit,
  humanDuration,
  limitRefusal,
  limitRefusalText,
  type MonitorForm,
  monitorRequest,
  runOutcomeText,
  STATE_TEXT,
} from '../monitor';
import { navigate } from '../router';
import { CopyValue, ErrorNotice, Icon, Notice, PageHeader, Spinner } from '../ui';
import { tenantName } from './tenant';

/** How often an open monitoring (or the list) refreshes while something in it is active (ms). */
const LIVE_REFRESH_MS = 5000;

const UNITS: DurationUnit[] = ['minutes', 'hours', 'days', 'weeks'];

/**
 * The monitoring screen (`#/monitors`): a form to start a monitoring of a URL (interval and period in human
 * units, sent as ISO 8601 durations) and the workspace's monitorings with their state, newest first.
 */
export function Monitors() {
  const { t, language } = useI18n();
  const { bridge, session } = useApp();
  const [list, setList] = useState<MonitorSummaryDto[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback(async () => {
    try {
      setList((await bridge.listMonitors()).monitors);
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, [bridge]);
  useEffect(() => {
    void load();
  }, [load]);
  const live = list?.some((m) => m.state === 'active') ?? false;
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => void load(), LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, load]);
  const readerOnly = session?.me.role === 'reader';
  return (
    <div className="page" data-testid="monitors">
      <PageHeader
        title={t('monitor.title')}
        subtitle={session ? tenantName(t, session) : undefined}
        actions={
          <button type="button" className="button button-ghost" onClick={() => void load()}>
            <Icon name="refresh" size={16} /> {t('monitor.refresh')}
          </button>
        }
      />
      <p className="muted small">{t('monitor.subtitle')}</p>
      <NewMonitor readerOnly={readerOnly} onCreated={(m) => navigate({ name: 'monitor', id: m.id })} />
      <h2>{t('monitor.list')}</h2>
      {error !== null && <ErrorNotice error={error} onRetry={() => void load()} />}
      {list === null && error === null && <Spinner />}
      {list?.length === 0 && <p className="muted">{t('monitor.empty')}</p>}
      {list && list.length > 0 && (
        <div className="card table-card">
          <table className="table" data-testid="monitors-table">
            <thead>
              <tr>
                <th>{t('monitor.col.url')}</th>
                <th>{t('monitor.col.every')}</th>
                <th>{t('monitor.col.state')}</th>
                <th>{t('monitor.col.runs')}</th>
                <th>{t('monitor.col.last')}</th>
              </tr>
            </thead>
            <tbody>
              {list.map((m) => (
                <tr
                  key={m.id}
                  tabIndex={0}
                  className="row-link"
                  data-testid="monitor-row"
                  data-state={m.state}
                  onClick={() => navigate({ name: 'monitor', id: m.id })}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') navigate({ name: 'monitor', id: m.id });
                  }}
                >
                  <td>
                    <code className="capture-url">{m.url}</code>
                  </td>
                  <td>{humanDuration(t, m.intervalSeconds)}</td>
                  <td>{t(STATE_TEXT[m.state])}</td>
                  <td>{t('monitor.runsOf', { done: m.runsDone, planned: m.plannedRuns })}</td>
                  <td className="small">
                    {m.lastRun ? (
                      <>
                        {formatDateTime(m.lastRun.observedAt, language)}
                        <div className="muted">{runOutcomeText(t, m.lastRun)}</div>
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** The form that starts a monitoring. */
function NewMonitor({ readerOnly, onCreated }: { readerOnly: boolean; onCreated: (m: MonitorDto) => void }) {
  const { t } = useI18n();
  const { bridge } = useApp();
  const ids = useId();
  const [form, setForm] = useState<MonitorForm>({
    url: '',
    intervalAmount: '6',
    intervalUnit: 'hours',
    periodAmount: '30',
    periodUnit: 'days',
    consent: false,
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const check = monitorRequest(form);
  const urlProblem = !check.ok && form.url.trim() !== '' ? captureUrlProblemText(t, check.url) : null;
  const durationProblem = check.ok
    ? null
    : check.interval
      ? t('monitor.bad.interval')
      : check.period === 'invalid'
        ? t('monitor.bad.period')
        : check.period === 'shorter'
          ? t('monitor.bad.shorter')
          : check.period === 'too-many-runs'
            ? t('monitor.bad.tooManyRuns')
            : null;
  const submit = async () => {
    if (!check.ok || busy) return;
    setBusy(true);
    setError(null);
    try {
      onCreated(await bridge.createMonitor(check.request));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const refusal = error === null ? undefined : limitRefusal(error);
  /** An amount and its unit, for the interval between runs or the whole period. */
  const durationField = (kind: 'interval' | 'period') => {
    const amount = kind === 'interval' ? 'intervalAmount' : 'periodAmount';
    const unit = kind === 'interval' ? 'intervalUnit' : 'periodUnit';
    return (
      <label className="field">
        <span>{t(`monitor.${kind}`)}</span>
        <span className="button-row">
          <input
            data-testid={`monitor-${amount}`}
            inputMode="numeric"
            value={form[amount]}
            maxLength={6}
            disabled={busy}
            onChange={(e) => setForm({ ...form, [amount]: e.target.value })}
          />
          <select
            data-testid={`monitor-${unit}`}
            value={form[unit]}
            disabled={busy}
            onChange={(e) => setForm({ ...form, [unit]: e.target.value as DurationUnit })}
          >
            {UNITS.map((u) => (
              <option key={u} value={u}>
                {t(`monitor.unitName.${u}`)}
              </option>
            ))}
          </select>
        </span>
      </label>
    );
  };
  return (
    <form
      className="card ipfs-import"
      data-testid="monitor-new"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>{t('monitor.new')}</h3>
      <div className="form-grid">
        <label className="field" htmlFor={`${ids}-url`}>
          <span>{t('monitor.url')}</span>
          <input
            id={`${ids}-url`}
            type="url"
            data-testid="monitor-url"
            value={form.url}
            maxLength={2048}
            spellCheck={false}
            autoCapitalize="off"
            placeholder={t('capture.urlPlaceholder')}
            aria-invalid={urlProblem !== null}
            disabled={busy}
            onChange={(e) => setForm({ ...form, url: e.target.value })}
          />
          <span className={urlProblem ? 'field-problem' : 'field-hint'}>
            {urlProblem ?? t('capture.urlHint')}
          </span>
        </label>
        {durationField('interval')}
        {durationField('period')}
      </div>
      {durationProblem ? (
        <small className="field-problem" role="alert" data-testid="monitor-duration-problem">
          {durationProblem}
        </small>
      ) : (
        check.ok && <p className="muted small">{t('monitor.plan', { runs: check.runs })}</p>
      )}
      <div className="consent">
        <label className="checkbox">
          <input
            type="checkbox"
            data-testid="monitor-consent"
            checked={form.consent}
            disabled={busy}
            onChange={(e) => setForm({ ...form, consent: e.target.checked })}
          />
          <span>
            <strong>{t('monitor.consent')}</strong>
            <span className="consent-text">{t('monitor.consentText')}</span>
          </span>
        </label>
      </div>
      {readerOnly && (
        <Notice kind="warn">{t('notarize.readerRole', { role: t('tenant.role.reader') })}</Notice>
      )}
      {error !== null && (
        <div data-testid="monitor-error">
          <ErrorNotice error={error} compact headline={refusal ? limitRefusalText(t, refusal) : null} />
        </div>
      )}
      <div className="ipfs-import-actions">
        <span className="spacer" />
        {!form.consent && <span className="muted small">{t('monitor.bad.consent')}</span>}
        <button
          type="submit"
          className="button button-primary"
          data-testid="monitor-submit"
          disabled={!check.ok || busy || readerOnly}
        >
          {busy ? <Spinner /> : <Icon name="clock" size={16} />} {t('monitor.create')}
        </button>
      </div>
    </form>
  );
}

/**
 * One monitoring (`#/monitors/<id>`): its state and plan, the timeline of its runs (time, available or the
 * gap's cause, serial and the hash links), cancel with confirmation, and the certidão's download.
 */
export function MonitorDetail({ id }: { id: string }) {
  const { t, language } = useI18n();
  const { bridge, session } = useApp();
  const [monitor, setMonitor] = useState<MonitorDto | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState<'cancel' | 'certidao' | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setMonitor(await bridge.getMonitor(id));
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, [bridge, id]);
  useEffect(() => {
    void load();
  }, [load]);
  const live = monitor?.state === 'active';
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => void load(), LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, load]);
  const act = async (what: 'cancel' | 'certidao') => {
    setBusy(what);
    setActionError(null);
    setSaved(null);
    try {
      if (what === 'cancel') {
        setMonitor(await bridge.cancelMonitor(id));
        setConfirming(false);
      } else {
        const file = await bridge.saveCertidao(id);
        if (file) setSaved(t('monitor.certidaoSaved', { file: file.fileName }));
        await load();
      }
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(null);
    }
  };
  const readerOnly = session?.me.role === 'reader';
  return (
    <div className="page" data-testid="monitor-detail">
      <button type="button" className="link-button" onClick={() => navigate({ name: 'monitors' })}>
        <Icon name="back" size={16} /> {t('monitor.back')}
      </button>
      {error !== null && <ErrorNotice error={error} onRetry={() => void load()} />}
      {monitor === null && error === null && <Spinner />}
      {monitor && (
        <>
          <PageHeader
            title={<code className="capture-url">{monitor.url}</code>}
            subtitle={t('monitor.every', {
              interval: humanDuration(t, monitor.intervalSeconds),
              period: humanDuration(t, monitor.periodSeconds),
            })}
          />
          <div className="card">
            <p>
              <strong data-testid="monitor-state" data-state={monitor.state}>
                {t(STATE_TEXT[monitor.state])}
              </strong>{' '}
              · {t('monitor.runsOf', { done: monitor.runs.length, planned: monitor.plannedRuns })}
            </p>
            {monitor.nextRunAt && (
              <p className="small">
                {t('monitor.next', { at: formatDateTime(monitor.nextRunAt, language) })}
              </p>
            )}
            <p className="small muted">
              {t('monitor.ends', { at: formatDateTime(monitor.endsAt, language) })}
            </p>
            {monitor.failure && (
              <Notice kind="warn">{t('monitor.failure', { reason: monitor.failure })}</Notice>
            )}
            <div className="button-row">
              <button
                type="button"
                className="button button-primary"
                data-testid="monitor-certidao"
                disabled={busy !== null || monitor.runs.length === 0}
                onClick={() => void act('certidao')}
              >
                {busy === 'certidao' ? <Spinner /> : <Icon name="download" size={16} />}{' '}
                {t('monitor.certidao')}
              </button>
              {monitor.state === 'active' && !readerOnly && !confirming && (
                <button
                  type="button"
                  className="button"
                  data-testid="monitor-cancel"
                  disabled={busy !== null}
                  onClick={() => setConfirming(true)}
                >
                  <Icon name="x" size={16} /> {t('monitor.cancel')}
                </button>
              )}
            </div>
            <p className="muted small">{t('monitor.certidaoHelp')}</p>
            {confirming && (
              <div className="notice notice-warn" role="alertdialog" data-testid="monitor-cancel-confirm">
                <div className="notice-body">{t('monitor.cancelConfirm')}</div>
                <button
                  type="button"
                  className="button button-small"
                  data-testid="monitor-cancel-yes"
                  disabled={busy !== null}
                  onClick={() => void act('cancel')}
                >
                  {busy === 'cancel' ? <Spinner /> : null} {t('monitor.cancelYes')}
                </button>
                <button
                  type="button"
                  className="button button-small button-ghost"
                  onClick={() => setConfirming(false)}
                >
                  {t('monitor.cancelNo')}
                </button>
              </div>
            )}
            {saved && <Notice kind="ok">{saved}</Notice>}
            {actionError !== null && <ErrorNotice error={actionError} compact />}
          </div>
          <h2>{t('monitor.timeline')}</h2>
          {monitor.runs.length === 0 ? (
            <p className="muted">{t('monitor.noRuns')}</p>
          ) : (
            <ol className="timeline" data-testid="monitor-timeline">
              {monitor.runs.map((r) => (
                <RunItem key={r.run} run={r} />
              ))}
            </ol>
          )}
        </>
      )}
    </div>
  );
}

/** One run on the timeline: when, what was observed, and its links (serial, archive hash, previous hash). */
function RunItem({ run }: { run: MonitorRunDto }) {
  const { t, language } = useI18n();
  return (
    <li
      className={`timeline-item timeline-${run.outcome}`}
      data-testid="monitor-run"
      data-outcome={run.outcome}
    >
      <div>
        <strong>{t('monitor.run.number', { n: run.run })}</strong> ·{' '}
        {formatDateTime(run.observedAt, language)}
      </div>
      <div data-testid="monitor-run-outcome">{runOutcomeText(t, run)}</div>
      {run.detail && run.outcome !== 'seen' && <div className="muted small">{run.detail}</div>}
      {run.documentId && run.serialNumber && (
        <button
          type="button"
          className="link-button"
          onClick={() => run.documentId && navigate({ name: 'document', id: run.documentId })}
        >
          {run.serialNumber}
        </button>
      )}
      {run.waczSha256 && <CopyValue value={run.waczSha256} display={shorten(run.waczSha256)} />}
      {run.previousWaczSha256 && (
        <div className="muted small">
          {t('monitor.run.previous', { hash: shorten(run.previousWaczSha256) })}
        </div>
      )}
    </li>
  );
}
