import { withBrasiliaTimes } from '@notary/shared/time';
import type { CheckResult, PadesSignerReport, VerifyOutcome, VerifyReport } from '@notary/verify';
import { type Message, renderSource, textOf } from '@notary/verify/messages/index';
import { isIncomplete } from '@notary/verify/report';
import { useEffect, useRef, useState } from 'react';
import type { LocalFile } from '../../common/bridge';
import {
  type CertificateCheck,
  type ChainEndpoints,
  parseEndpoints,
  type TrustChoice,
} from '../../common/certificate-check';
import { useApp } from '../app-context';
import { type MessageKey, useI18n } from '../i18n';
import { DropZone, ErrorNotice, Icon, type IconName, Spinner } from '../ui';
import { EndpointsEditor, JudgeAtField, TrustAnchorsField, type TrustKind } from './CertificateCheckInputs';

/** The checks the screen shows, with their names (`SCREEN_CHECKS`: all six). */
const CHECK_NAMES: Readonly<Record<number, MessageKey>> = {
  1: 'verify.cert.check.1',
  2: 'verify.cert.check.2',
  3: 'verify.cert.check.3',
  4: 'verify.cert.check.4',
  5: 'verify.cert.check.5',
  6: 'verify.cert.check.6',
};

type PanelState =
  | { kind: 'idle' }
  | { kind: 'checking' }
  /** `trust`: the choice the result was obtained with (a chain not checked is said so with no anchors). */
  | { kind: 'done'; result: CertificateCheck; trust: TrustKind }
  | { kind: 'bad-endpoint'; value: string }
  | { kind: 'error'; error: unknown };

/**
 * The verify screen's certificate check: with the file chosen above and its certificate PDF, the six checks
 * of `notary-verify` run here (browser) or in main (Electron): 1 to 4 against the chain endpoints the service
 * announces, which the user may edit or extend; 5 (RFC 3161 token) and 6 (the certificate's PAdES signature)
 * with no request, chained to the trust anchors the user chooses: none (the chains are reported not checked),
 * the ICP-Brasil roots, or PEM files. Each check is shown with its result and evidence. A new file,
 * certificate or trust choice runs the checks again; "Check again" after editing the endpoints.
 */
export function CertificateCheckPanel({ file }: { file: LocalFile | null }) {
  const { t } = useI18n();
  const { bridge, onchainInfo } = useApp();
  const [certificate, setCertificate] = useState<LocalFile | null>(null);
  // null: not edited, the announced endpoints are used (they arrive after the screen opens).
  const [evmText, setEvmText] = useState<string | null>(null);
  const [stacksText, setStacksText] = useState<string | null>(null);
  const [trustKind, setTrustKind] = useState<TrustKind>('none');
  const [anchorFiles, setAnchorFiles] = useState<LocalFile[]>([]);
  // `<input type="datetime-local">` value, in the computer's time zone; empty: now.
  const [atText, setAtText] = useState('');
  const at = localDateTimeToIso(atText);
  // The files kind without files yet checks as none until some are picked.
  const trust: TrustChoice =
    trustKind === 'files' && anchorFiles.length > 0
      ? { kind: 'files', fileIds: anchorFiles.map((f) => f.id) }
      : trustKind === 'icp-brasil'
        ? { kind: 'icp-brasil' }
        : { kind: 'none' };

  const announced = onchainInfo?.verification;
  const evm = evmText ?? announced?.evmRpcUrls.join('\n') ?? '';
  const stacks = stacksText ?? announced?.stacksApiUrls.join('\n') ?? '';
  const { state, setState, run } = useCheckRun(file, certificate, trust, { evm, stacks, at });
  const onError = (error: unknown) => setState({ kind: 'error', error });
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
        onFiles={(files) => void bridge.dropFiles(files).then(choose, onError)}
        onPick={() => void bridge.pickFiles().then(choose, onError)}
        title={certificate ? t('verify.cert.chosen', { name: certificate.name }) : t('verify.cert.drop')}
        buttonLabel={t('verify.cert.pick')}
      />
      <EndpointsEditor evm={evm} stacks={stacks} onEvm={setEvmText} onStacks={setStacksText} />
      <TrustAnchorsField
        kind={trustKind}
        onKind={setTrustKind}
        anchorFiles={anchorFiles}
        onAnchorFiles={setAnchorFiles}
        onError={onError}
      />
      <JudgeAtField text={atText} at={at} onText={setAtText} />
      <div>
        <button
          type="button"
          className="button"
          disabled={!file || !certificate || state.kind === 'checking'}
          onClick={() => file && certificate && void run(file, certificate, evm, stacks, trust, at)}
        >
          {t('verify.cert.run')}
        </button>
      </div>
      {certificate && !file && <p className="muted small">{t('verify.cert.needFile')}</p>}
      <CheckOutcome state={state} />
    </section>
  );
}

/** The endpoints and the judging moment as the panel shows them when a run starts by itself. */
interface ShownInputs {
  evm: string;
  stacks: string;
  at: string | null;
}

/**
 * The panel's runs of the checks: `run` parses the endpoints (a refused one is a `bad-endpoint` state) and
 * asks the bridge; only the latest run's answer is kept. A new file, certificate or trust choice runs the
 * checks again with the inputs shown then.
 */
function useCheckRun(
  file: LocalFile | null,
  certificate: LocalFile | null,
  trust: TrustChoice,
  shown: ShownInputs,
) {
  const { bridge } = useApp();
  const [state, setState] = useState<PanelState>({ kind: 'idle' });
  const latestRun = useRef(0);
  const run = async (
    target: LocalFile,
    cert: LocalFile,
    evmList: string,
    stacksList: string,
    trustChoice: TrustChoice,
    atIso: string | null,
  ) => {
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
      const result = await bridge.checkCertificate(target.id, cert.id, endpoints, {
        trust: trustChoice,
        at: atIso,
      });
      // A newer run (another file, certificate or trust choice) supersedes this one.
      if (latestRun.current === runId) setState({ kind: 'done', result, trust: trustChoice.kind });
    } catch (error) {
      if (latestRun.current === runId) setState({ kind: 'error', error });
    }
  };

  // A new file, certificate or trust choice: check again with the endpoints shown.
  const runRef = useRef(run);
  runRef.current = run;
  const endpointsRef = useRef(shown);
  endpointsRef.current = shown;
  const trustKey = JSON.stringify(trust);
  useEffect(() => {
    if (file && certificate) {
      void runRef.current(
        file,
        certificate,
        endpointsRef.current.evm,
        endpointsRef.current.stacks,
        JSON.parse(trustKey) as TrustChoice,
        endpointsRef.current.at,
      );
    }
  }, [file, certificate, trustKey]);
  return { state, setState, run };
}

/** What the last run said: running, an endpoint refused, an error, an unreadable input, or the report. */
function CheckOutcome({ state }: { state: PanelState }) {
  const { t } = useI18n();
  return (
    <>
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
      {state.kind === 'done' && state.result.kind === 'bad-anchor' && (
        <p className="field-problem" role="alert" data-testid="anchor-unusable">
          {t(`verify.cert.badAnchor.${state.result.problem}`, { name: state.result.fileName })}
        </p>
      )}
      {state.kind === 'done' && state.result.kind === 'report' && (
        <ReportView report={state.result.report} anchored={state.trust !== 'none'} />
      )}
    </>
  );
}

/**
 * The UTC ISO 8601 date-time (`toISOString`) of a `datetime-local` value (`YYYY-MM-DDTHH:mm[:ss]`, the
 * computer's time zone); null when empty or not a date.
 */
export function localDateTimeToIso(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * The report's head as shown: `passed` (every applicable check passed), `failed` (at `failedAt`), or
 * `incomplete` (none failed, `ids` could not run in full: an endpoint unavailable, none given, an anchor
 * pending, a part not checked). The same outcome as `notary-verify`'s exit status 0, 1 and 3.
 */
export function reportHead(report: VerifyReport): {
  outcome: VerifyOutcome;
  icon: IconName;
  title: MessageKey;
  params: Record<string, string | number>;
  help: MessageKey | null;
} {
  switch (report.outcome) {
    case 'passed':
      return {
        outcome: 'passed',
        icon: 'check',
        title: 'verify.cert.ok',
        params: {},
        help: 'verify.cert.okHelp',
      };
    case 'failed':
      return {
        outcome: 'failed',
        icon: 'x',
        title: 'verify.cert.failed',
        params: { id: report.failedAt ?? '' },
        help: null,
      };
    case 'incomplete': {
      const ids = report.checks
        .filter(isIncomplete)
        .map((c) => c.id)
        .join(', ');
      return {
        outcome: 'incomplete',
        icon: 'alert',
        title: 'verify.cert.incomplete',
        params: { ids },
        help: 'verify.cert.incompleteHelp',
      };
    }
  }
}

/**
 * A check's badge (text and style) and reason line: a check that does not apply to this receipt says so
 * instead of "not run"; a check that could not run in full says why (`CheckResult.reason`).
 */
export function checkBadge(check: Pick<CheckResult, 'status' | 'reason'>): {
  label: MessageKey;
  className: string;
  reason: MessageKey | null;
} {
  const notApplicable = check.status === 'not-run' && check.reason === 'not-applicable';
  return {
    label: notApplicable ? 'verify.cert.status.not-applicable' : `verify.cert.status.${check.status}`,
    className: `badge badge-check-${notApplicable ? 'not-applicable' : check.status}`,
    reason:
      check.reason && check.reason !== 'not-applicable' && check.reason !== 'not-requested'
        ? `verify.cert.reason.${check.reason}`
        : null,
  };
}

/**
 * Check 6's signers when the certificate carries more than the service's signature (the tabelião's own, made
 * with their ICP-Brasil certificate), oldest first: each one's verdict, name, policy, level and subject.
 */
function SignerList({ signers, at }: { signers: readonly PadesSignerReport[]; at: string }) {
  const { t, language } = useI18n();
  return (
    <ul className="evidence" data-testid="pades-signers">
      {signers.map((s) => {
        const badge = checkBadge(s);
        return (
          <li key={s.index} data-testid="pades-signer" data-status={s.status}>
            <span className={badge.className}>{t(badge.label)}</span> <strong>{s.name ?? '—'}</strong>
            {s.policy ? ` · ${s.policy}` : ''}
            {` · ${t('verify.cert.level', { level: s.level ?? '—', at: withBrasiliaTimes(at, language) })}`}
            {s.subject && <span className="muted"> · {s.subject}</span>}
          </li>
        );
      })}
    </ul>
  );
}

/** `anchored`: the run had trust anchors (without, checks 5 and 6 say their chains were not checked). */
function ReportView({ report, anchored }: { report: VerifyReport; anchored: boolean }) {
  const { t } = useI18n();
  const shown = report.checks.filter((c) => CHECK_NAMES[c.id] !== undefined);
  const head = reportHead(report);
  return (
    <div
      className={`cert-report cert-report-${head.outcome === 'passed' ? 'ok' : head.outcome}`}
      data-testid="certificate-check"
      data-ok={String(report.ok)}
      data-outcome={head.outcome}
      data-exit-code={report.exitCode}
      data-failed-at={report.failedAt ?? ''}
    >
      <div className="cert-report-head">
        <Icon name={head.icon} size={22} />
        <div>
          <h3>{t(head.title, head.params)}</h3>
          {head.help && <p className="muted small">{t(head.help)}</p>}
        </div>
      </div>
      <ol className="check-list">
        {shown.map((check) => (
          <CheckRow key={check.id} check={check} anchored={anchored} />
        ))}
      </ol>
    </div>
  );
}

/** Evidence of a part the check could not do (`CheckBuilder.skip` in `@notary/verify`). */
const NOT_CHECKED = /(^|: )not checked$/;

function CheckRow({ check, anchored }: { check: CheckResult; anchored: boolean }) {
  const { t, language } = useI18n();
  // The checking core reports messages (a code and its data); they are rendered in the language the rest of the
  // screen speaks (data such as hashes and names is kept as it is; its RFC 3339 UTC times are shown in Brasília
  // time and UTC). A report written before messages shows its English text.
  const say = (message: Message | undefined, text: string) =>
    withBrasiliaTimes(textOf(message, text, language), language);
  const name = CHECK_NAMES[check.id];
  // Checks 5 and 6 judged without anchors: integrity and timestamps hold, the chains are not checked.
  const chainNotChecked =
    !anchored &&
    (check.id === 5 || check.id === 6) &&
    check.status === 'partial' &&
    check.evidence.some((e) => NOT_CHECKED.test(e.label));
  const badge = checkBadge(check);
  return (
    <li
      className={`check-row check-${check.status}`}
      data-testid={`check-${check.id}`}
      data-status={check.status}
      data-reason={check.reason ?? ''}
    >
      <div className="check-row-head">
        <span className={badge.className}>{t(badge.label)}</span>
        <strong>
          {check.id}. {name ? t(name) : check.name}
        </strong>
      </div>
      {badge.reason && !chainNotChecked && (
        <p className="small check-reason" data-testid={`check-reason-${check.id}`}>
          {t(badge.reason)}
        </p>
      )}
      <p className="small check-summary">{say(check.summaryMessage, check.summary)}</p>
      {check.pades && (
        <p className="small check-note-level" data-testid="pades-level" data-level={check.pades.level ?? ''}>
          {t('verify.cert.level', {
            level: check.pades.level ?? '—',
            at: withBrasiliaTimes(check.pades.at, language),
          })}
          {check.pades.notHigher.length > 0 && (
            <span className="muted">
              {' '}
              ·{' '}
              {t('verify.cert.notHigher', {
                why: check.pades.notHigher
                  .map((text, i) => say(check.pades?.notHigherMessages?.[i], text))
                  .join('; '),
              })}
            </span>
          )}
        </p>
      )}
      {check.pades?.signers && check.pades.signers.length > 1 && (
        <SignerList signers={check.pades.signers} at={check.pades.at} />
      )}
      {chainNotChecked && (
        <p className="small check-note" data-testid={`chain-not-checked-${check.id}`}>
          {t('verify.cert.chainNotChecked')}
        </p>
      )}
      {check.evidence.length > 0 && (
        <details>
          <summary className="small">{t('verify.cert.evidence')}</summary>
          <ul className="evidence">
            {check.evidence.map((e) => (
              <li
                key={`${e.label}|${e.source ?? ''}|${e.value}`}
                className={e.ok === false ? 'evidence-bad' : e.ok ? 'evidence-ok' : undefined}
              >
                <span className="evidence-label">{say(e.labelMessage, e.label)}</span>{' '}
                <code className="break">{say(e.valueMessage, e.value)}</code>
                {e.source && <span className="muted"> · {renderSource(e.source, language)}</span>}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}
