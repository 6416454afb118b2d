import type { PublicDocumentDto } from '@notary/shared';
import { type FormEvent, useState } from 'react';
import type { LocalFile } from '../../common/bridge';
import { isClientError } from '../../common/errors';
import { useApp } from '../app-context';
import { explorerLinks, formatDateTime, overallStatus, percent } from '../format';
import { useI18n } from '../i18n';
import {
  CopyValue,
  DropZone,
  ErrorNotice,
  ExternalLink,
  Icon,
  PageHeader,
  ProgressBar,
  StatusBadge,
} from '../ui';
import { CertidaoChainPanel } from './CertidaoChain';
import { CertificateCheckPanel } from './CertificateCheck';

type Outcome =
  | { kind: 'found'; doc: PublicDocumentDto; fileName: string | null }
  | { kind: 'not-found'; hash: string; fileName: string };

/**
 * Public verification, no sign-in (spec, Public, no credentials: GET /api/public/verify and
 * /api/public/documents/:serial): a file is hashed
 * here and looked up by hash, or a serial number is looked up; the public projection is shown. With the certificate
 * too, checks 1 to 4 of `notary-verify` run on this side against chain endpoints, so the answer does not rest on this
 * service's word.
 */
export function Verify() {
  const { t } = useI18n();
  const { bridge } = useApp();
  const [progress, setProgress] = useState<number | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [serial, setSerial] = useState('');
  const [chosen, setChosen] = useState<LocalFile | null>(null);

  const verifyFiles = async (files: LocalFile[]) => {
    const file = files[0];
    if (!file) return;
    setChosen(file);
    setOutcome(null);
    setError(null);
    setProgress(0);
    try {
      const hash = await bridge.hashFile(file.id, crypto.randomUUID(), ({ loaded, total }) =>
        setProgress(percent(loaded, total)),
      );
      const answer = await bridge.publicVerify(hash);
      setOutcome(
        answer.found && answer.document
          ? { kind: 'found', doc: answer.document, fileName: file.name }
          : { kind: 'not-found', hash, fileName: file.name },
      );
    } catch (e) {
      setError(e);
    } finally {
      setProgress(null);
    }
  };

  const lookup = async (e: FormEvent) => {
    e.preventDefault();
    setOutcome(null);
    setError(null);
    try {
      setOutcome({ kind: 'found', doc: await bridge.publicDocument(serial.trim()), fileName: null });
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div className="page page-narrow">
      <PageHeader title={t('verify.title')} subtitle={t('verify.subtitle')} />
      <DropZone
        testId="verify-dropzone"
        onFiles={(files) => void bridge.dropFiles(files).then(verifyFiles, setError)}
        onPick={() => void bridge.pickFiles().then(verifyFiles, setError)}
        title={t('verify.drop')}
        hint={t('verify.dropHint')}
        buttonLabel={t('verify.pick')}
      />
      {progress !== null && (
        <div className="stack-small">
          <span className="muted small">{t('detail.hashing', { pct: progress })}</span>
          <ProgressBar value={progress} />
        </div>
      )}
      <form className="serial-lookup" onSubmit={lookup}>
        <label className="field field-inline">
          <span>{t('verify.bySerial')}</span>
          <input
            value={serial}
            maxLength={40}
            placeholder={t('verify.serialPlaceholder')}
            onChange={(e) => setSerial(e.target.value)}
          />
        </label>
        <button type="submit" className="button" disabled={!serial.trim()}>
          {t('verify.lookup')}
        </button>
      </form>
      {error !== null &&
        (isClientError(error) && error.kind === 'not-found' ? (
          <div className="result-card card result-missing" data-testid="verify-result" data-found="false">
            <Icon name="x" size={28} />
            <div>
              <h2>{t('verify.notFound')}</h2>
            </div>
          </div>
        ) : (
          <ErrorNotice error={error} />
        ))}
      {outcome?.kind === 'not-found' && (
        <div className="result-card card result-missing" data-testid="verify-result" data-found="false">
          <Icon name="x" size={28} />
          <div>
            <h2>{t('verify.notFound')}</h2>
            <p className="muted">{t('verify.notFoundHelp')}</p>
            <p className="small">
              <strong>{outcome.fileName}</strong>
            </p>
            <code className="break">{outcome.hash}</code>
          </div>
        </div>
      )}
      {outcome?.kind === 'found' && <PublicRecord doc={outcome.doc} fileName={outcome.fileName} />}
      <CertidaoChainPanel file={chosen} />
      <CertificateCheckPanel file={chosen} />
    </div>
  );
}

function PublicRecord({ doc, fileName }: { doc: PublicDocumentDto; fileName: string | null }) {
  const { t, language } = useI18n();
  const { onchainInfo } = useApp();
  const links = explorerLinks(doc, onchainInfo);
  return (
    <div className="result-card card result-found" data-testid="verify-result" data-found="true">
      <Icon name="verify" size={28} />
      <div className="result-body">
        <div className="result-head">
          <h2>{t('verify.found')}</h2>
          <StatusBadge status={overallStatus(doc)} />
        </div>
        {fileName && <p className="small">{fileName}</p>}
        <dl className="facts">
          <div className="fact">
            <dt>{t('detail.serial')}</dt>
            <dd>
              <CopyValue value={doc.serialNumber} testId="verify-serial" />
            </dd>
          </div>
          <div className="fact">
            <dt>{t('detail.hash')}</dt>
            <dd>
              <CopyValue value={doc.sha256Hash} />
            </dd>
          </div>
          <div className="fact">
            <dt>{t('detail.created')}</dt>
            <dd>{formatDateTime(doc.createdAt, language)}</dd>
          </div>
          <div className="fact">
            <dt>{t('detail.evm')}</dt>
            <dd>
              <StatusBadge status={doc.onchainStatus} />{' '}
              {doc.onchainTxHash && <CopyValue value={doc.onchainTxHash} />}
              {links.evmTx && <ExternalLink href={links.evmTx}>{t('detail.viewExplorer')}</ExternalLink>}
              {links.attestation && (
                <ExternalLink href={links.attestation}>{t('detail.viewAttestation')}</ExternalLink>
              )}
            </dd>
          </div>
          <div className="fact">
            <dt>{t('detail.stacks')}</dt>
            <dd>
              <StatusBadge status={doc.stacksStatus} />{' '}
              {doc.stacksTxId && <CopyValue value={doc.stacksTxId} />}
              {links.stacksTx && (
                <ExternalLink href={links.stacksTx}>{t('detail.viewExplorer')}</ExternalLink>
              )}
            </dd>
          </div>
        </dl>
      </div>
    </div>
  );
}
