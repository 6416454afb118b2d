import { render } from '@notary/verify/messages/index';
import { type ChainReport, chainMessages } from '@notary/verify/monitor-chain';
import { useEffect, useState } from 'react';
import type { LocalFile } from '../../common/bridge';
import { useApp } from '../app-context';
import { useI18n } from '../i18n';
import { ErrorNotice, Icon } from '../ui';

/**
 * On the verify screen, a chosen PDF that is a certidão de permanência (it carries `monitor-chain.json`): its run
 * chain checked as `notary-verify chain` does (`@notary/verify/monitor-chain`), one line per run with whether its
 * link holds, the breaks and the verdict, every text a message code of the verifier's tables in the UI language.
 * Nothing shows for a PDF that carries no chain.
 */
export function CertidaoChainPanel({ file }: { file: LocalFile | null }) {
  const { t, language } = useI18n();
  const { bridge } = useApp();
  const [report, setReport] = useState<ChainReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setReport(null);
    setError(null);
    if (!file || !/\.pdf$/i.test(file.name)) return;
    let current = true;
    bridge.checkCertidaoChain(file.id).then(
      (r) => current && setReport(r),
      (e: unknown) => current && setError(e),
    );
    return () => {
      current = false;
    };
  }, [bridge, file]);
  if (error !== null) return <ErrorNotice error={error} compact />;
  if (!report?.chain) return null;
  const m = chainMessages(report);
  const holds = report.breaks.length === 0;
  return (
    <div
      className={`card result-card ${holds ? 'result-found' : 'result-missing'}`}
      data-testid="certidao-chain"
      data-holds={String(holds)}
    >
      <Icon name={holds ? 'verify' : 'alert'} size={28} />
      <div className="result-body">
        <h2>{t('verify.chain.title')}</h2>
        <p className="small break">{render(m.summary, language)}</p>
        <ol className="timeline">
          {m.runs.map((r) => (
            <li
              key={r.run}
              className={`timeline-item ${r.holds ? 'timeline-seen' : 'timeline-unavailable'}`}
              data-testid="certidao-chain-run"
              data-holds={String(r.holds)}
            >
              <span className="break small">{render(r.line, language)}</span> ·{' '}
              <strong>{render({ code: r.holds ? 'chain.link.ok' : 'chain.link.break' }, language)}</strong>
            </li>
          ))}
        </ol>
        {m.breaks.map((b) => (
          <p key={render(b, 'en')} className="field-problem break" data-testid="certidao-chain-break">
            {render(b, language)}
          </p>
        ))}
        <p data-testid="certidao-chain-verdict">
          <strong>{render(m.verdict, language)}</strong>
        </p>
        <p className="muted small">{t('verify.chain.exit', { code: holds ? 0 : 1 })}</p>
      </div>
    </div>
  );
}
