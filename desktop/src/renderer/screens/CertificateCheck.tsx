import type { CheckResult, VerifyReport } from '@notary/verify';
import { useEffect, useRef, useState } from 'react';
import type { LocalFile } from '../../common/bridge';
import { type CertificateCheck, type ChainEndpoints, parseEndpoints } from '../../common/certificate-check';
import { useApp } from '../app-context';
import { type MessageKey, useI18n } from '../i18n';
import { DropZone, ErrorNotice, Icon, Spinner } from '../ui';

/** The checks the screen shows, with their names (`SCREEN_CHECKS`: 5 and 6 need trust anchors). */
const CHECK_NAMES: Readonly<Record<number, MessageKey>> = {
  1: 'verify.cert.check.1',
  2: 'verify.cert.check.2',
  3: 'verify.cert.check.3',
  4: 'verify.cert.check.4',
};

type PanelState =
  | { kind: 'idle' }
  | { kind: 'checking' }
  | { kind: 'done'; result: CertificateCheck }
  | { kind: 'bad-endpoint'; value: string }
  | { kind: 'error'; error: unknown };

/**
 * The verify screen's certificate check (issue 16): with the file chosen above and its certificate PDF,
 * checks 1 to 4 of `notary-verify` run here (browser) or in main (Electron) against the chain endpoints the
 * service announces, which the user may edit or extend; each check is shown with its result and evidence.
 * A new file or certificate runs the checks again; "Check again" after editing the endpoints.
 */
export function CertificateCheckPanel({ file }: { file: LocalFile | null }) {
  const { t } = useI18n();
  const { bridge, onchainInfo } = useApp();
  const [certificate, setCertificate] = useState<LocalFile | null>(null);
  // null: not edited, the announced endpoints are used (they arrive after the screen opens).
  const [evmText, setEvmText] = useState<string | null>(null);
  const [stacksText, setStacksText] = useState<string | null>(null);
  const [state, setState] = useState<PanelState>({ kind: 'idle' });
  const latestRun = useRef(0);

  const announced = onchainInfo?.verification;
  const evm = evmText ?? announced?.evmRpcUrls.join('\n') ?? '';
  const stacks = stacksText ?? announced?.stacksApiUrls.join('\n') ?? '';

  const run = async (target: LocalFile, cert: LocalFile, evmList: string, stacksList: string) => {
    const runId = latestRun.current + 1;
    latestRun.current = runId;
    const evmUrls = parseEndpoints(evmList);
    const stacksUrls = parseEndpoints(stacksList);
    const refused = evmUrls.refused ?? stacksUrls.refused;
    if (refused) {
      setState({ kind: 'bad-endpoint', value: refused.value });
      return;
    }
    const endpoints: ChainEndpoints = { evmRpcUrls: evmUrls.urls, stacksApiUrls: stacksUrls.urls };
    setState({ kind: 'checking' });
    try {
      const result = await bridge.checkCertificate(target.id, cert.id, endpoints);
      // A newer run (another file or certificate) supersedes this one.
      if (latestRun.current === runId) setState({ kind: 'done', result });
    } catch (error) {
      if (latestRun.current === runId) setState({ kind: 'error', error });
    }
  };

  // A new file or certificate: check again with the endpoints shown.
  const runRef = useRef(run);
  runRef.current = run;
  const endpointsRef = useRef({ evm, stacks });
  endpointsRef.current = { evm, stacks };
  useEffect(() => {
    if (file && certificate) {
      void runRef.current(file, certificate, endpointsRef.current.evm, endpointsRef.current.stacks);
    }
  }, [file, certificate]);

  const choose = (files: LocalFile[]) => {
    const first = files[0];
    if (first) setCertificate(first);
  };

  return (
    <section className="card cert-check stack" data-testid="certificate-check-panel">
      <div>
        <h2>{t('verify.cert.title')}</h2>
        <p className="muted small">{t('verify.cert.help')}</p>
      </div>
      <DropZone
        compact
        testId="certificate-dropzone"
        onFiles={(files) =>
          void bridge.dropFiles(files).then(choose, (error) => setState({ kind: 'error', error }))
        }
        onPick={() => void bridge.pickFiles().then(choose, (error) => setState({ kind: 'error', error }))}
        title={certificate ? t('verify.cert.chosen', { name: certificate.name }) : t('verify.cert.drop')}
        buttonLabel={t('verify.cert.pick')}
      />
      <details className="cert-endpoints">
        <summary>{t('verify.cert.endpoints')}</summary>
        <p className="muted small">{t('verify.cert.endpointsHelp')}</p>
        <label className="field">
          <span>{t('verify.cert.evm')}</span>
          <textarea
            rows={2}
            spellCheck={false}
            data-testid="endpoints-evm"
            value={evm}
            onChange={(e) => setEvmText(e.target.value)}
          />
        </label>
        <label className="field">
          <span>{t('verify.cert.stacks')}</span>
          <textarea
            rows={2}
            spellCheck={false}
            data-testid="endpoints-stacks"
            value={stacks}
            onChange={(e) => setStacksText(e.target.value)}
          />
        </label>
        <button
          type="button"
          className="button"
          disabled={!file || !certificate || state.kind === 'checking'}
          onClick={() => file && certificate && void run(file, certificate, evm, stacks)}
        >
          {t('verify.cert.run')}
        </button>
      </details>
      {certificate && !file && <p className="muted small">{t('verify.cert.needFile')}</p>}
      {state.kind === 'checking' && (
        <p className="muted small" data-testid="certificate-checking">
          <Spinner /> {t('verify.cert.checking')}
        </p>
      )}
      {state.kind === 'bad-endpoint' && (
        <p className="field-problem" role="alert">
          {t('verify.cert.badEndpoint', { value: state.value })}
        </p>
      )}
      {state.kind === 'error' && <ErrorNotice error={state.error} />}
      {state.kind === 'done' && state.result.kind === 'no-receipt' && (
        <p className="field-problem" role="alert" data-testid="certificate-unreadable">
          {t('verify.cert.noReceipt')}
        </p>
      )}
      {state.kind === 'done' && state.result.kind === 'bad-receipt' && (
        <p className="field-problem" role="alert" data-testid="certificate-unreadable">
          {t('verify.cert.badReceipt')} <span className="small">{state.result.message}</span>
        </p>
      )}
      {state.kind === 'done' && state.result.kind === 'report' && <ReportView report={state.result.report} />}
    </section>
  );
}

function ReportView({ report }: { report: VerifyReport }) {
  const { t } = useI18n();
  const shown = report.checks.filter((c) => CHECK_NAMES[c.id] !== undefined);
  return (
    <div
      className={`cert-report ${report.ok ? 'cert-report-ok' : 'cert-report-failed'}`}
      data-testid="certificate-check"
      data-ok={String(report.ok)}
      data-failed-at={report.failedAt ?? ''}
    >
      <div className="cert-report-head">
        <Icon name={report.ok ? 'check' : 'x'} size={22} />
        <div>
          <h3>{report.ok ? t('verify.cert.ok') : t('verify.cert.failed', { id: report.failedAt ?? '' })}</h3>
          {report.ok && <p className="muted small">{t('verify.cert.okHelp')}</p>}
        </div>
      </div>
      <ol className="check-list">
        {shown.map((check) => (
          <CheckRow key={check.id} check={check} />
        ))}
      </ol>
    </div>
  );
}

function CheckRow({ check }: { check: CheckResult }) {
  const { t } = useI18n();
  const name = CHECK_NAMES[check.id];
  return (
    <li
      className={`check-row check-${check.status}`}
      data-testid={`check-${check.id}`}
      data-status={check.status}
    >
      <div className="check-row-head">
        <span className={`badge badge-check-${check.status}`}>{t(`verify.cert.status.${check.status}`)}</span>
        <strong>
          {check.id}. {name ? t(name) : check.name}
        </strong>
      </div>
      <p className="small check-summary">{check.summary}</p>
      {check.evidence.length > 0 && (
        <details>
          <summary className="small">{t('verify.cert.evidence')}</summary>
          <ul className="evidence">
            {check.evidence.map((e) => (
              <li
                key={`${e.label}|${e.source ?? ''}|${e.value}`}
                className={e.ok === false ? 'evidence-bad' : e.ok ? 'evidence-ok' : undefined}
              >
                <span className="evidence-label">{e.label}</span> <code className="break">{e.value}</code>
                {e.source && <span className="muted"> · {e.source}</span>}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}
