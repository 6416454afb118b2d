import type { DocumentDto, HashComparisonDto } from '@notary/shared';
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import type { GatewayLink, LocalFile } from '../../common/bridge';
import { cidOfSource } from '../../common/cid';
import { isClientError } from '../../common/errors';
import { useApp } from '../app-context';
import { type AtaForm, ataRequest } from '../ata';
import { explorerLinks, formatDateTime, formatSize, overallStatus, percent } from '../format';
import { useI18n } from '../i18n';
import { navigate } from '../router';
import {
  CopyValue,
  DropZone,
  ErrorNotice,
  ExternalLink,
  Icon,
  Notice,
  ProgressBar,
  Spinner,
  StatusBadge,
} from '../ui';
import { NotarySignatureCard } from './NotarySignature';

/** How often a document still being anchored is re-read (ms). */
const LIVE_REFRESH_MS = 2000;

/**
 * One document: serial, hash, both anchoring statuses (re-read until `registered` on both chains), explorer
 * and attestation links, certificate (open or save), timestamp token (save), and "verify a local file
 * against this record".
 */
export function DocumentDetail({ id }: { id: string }) {
  const { t, language } = useI18n();
  const { bridge, onchainInfo, settings } = useApp();
  const [doc, setDoc] = useState<DocumentDto | null>(null);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async () => {
    try {
      setDoc(await bridge.getDocument(id));
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, [bridge, id]);

  useEffect(() => {
    setDoc(null);
    void load();
  }, [load]);

  const live = doc !== null && overallStatus(doc) !== 'registered';
  useEffect(() => {
    if (!live || error) return;
    const timer = setInterval(() => void load(), LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, error, load]);

  if (!doc) {
    return (
      <div className="page">
        <BackLink />
        {error !== null ? (
          <ErrorNotice error={error} onRetry={() => void load()} />
        ) : (
          <div className="loading">
            <Spinner /> {t('common.loading')}
          </div>
        )}
      </div>
    );
  }

  const links = explorerLinks(doc, onchainInfo);
  const cid = cidOfSource(doc);
  const publicRecord = `${settings.serverUrl}/api/public/documents/${encodeURIComponent(doc.serialNumber)}`;
  return (
    <div className="page" data-testid="document-detail">
      <BackLink />
      <header className="page-header detail-header">
        <div className="detail-title">
          <h1 className="file-name" title={doc.fileName}>
            {doc.fileName}
          </h1>
          <div className="detail-serial">
            <span className="muted">{t('detail.serial')}</span>
            <CopyValue value={doc.serialNumber} testId="detail-serial" />
            <span data-testid="detail-status">
              <StatusBadge status={overallStatus(doc)} />
            </span>
          </div>
        </div>
        <div className="page-actions">
          <ExternalLink href={publicRecord}>{t('detail.publicRecord')}</ExternalLink>
        </div>
      </header>
      {error !== null && <ErrorNotice error={error} onRetry={() => void load()} compact />}

      <section className="section">
        <div className="section-title">
          <h2>{t('detail.anchors')}</h2>
          {live && (
            <span className="muted small live">
              <Spinner /> {t('detail.anchorsLive')}
            </span>
          )}
        </div>
        <div className="grid-2">
          <AnchorCard
            testId="anchor-evm"
            title={t('detail.evm')}
            status={doc.onchainStatus}
            network={onchainInfo ? `${onchainInfo.network} (chain ${onchainInfo.chainId})` : null}
            rows={[
              [t('detail.tx'), doc.onchainTxHash],
              [t('detail.attestation'), doc.onchainAttestationUid],
              [t('detail.anchoredAt'), doc.onchainAt ? formatDateTime(doc.onchainAt, language) : null],
            ]}
            links={[
              links.evmTx ? { href: links.evmTx, label: t('detail.viewExplorer') } : null,
              links.attestation ? { href: links.attestation, label: t('detail.viewAttestation') } : null,
            ]}
            devnet={onchainInfo !== null && !onchainInfo.explorerTxPrefix}
          />
          <AnchorCard
            testId="anchor-stacks"
            title={t('detail.stacks')}
            status={doc.stacksStatus}
            network={onchainInfo?.stacksNetwork ?? null}
            rows={[
              [t('detail.tx'), doc.stacksTxId],
              [
                t('detail.anchoredAt'),
                doc.stacksAnchoredAt ? formatDateTime(doc.stacksAnchoredAt, language) : null,
              ],
            ]}
            links={[links.stacksTx ? { href: links.stacksTx, label: t('detail.viewExplorer') } : null]}
            devnet={onchainInfo !== null && !onchainInfo.stacksExplorerTxPrefix}
          />
        </div>
      </section>

      <section className="section">
        <h2>{t('detail.file')}</h2>
        <div className="card">
          <dl className="facts">
            <Fact label={t('detail.hash')}>
              <CopyValue value={doc.sha256Hash} testId="detail-hash" />
            </Fact>
            <Fact label={t('detail.size')}>{formatSize(doc.fileSize, language)}</Fact>
            <Fact label={t('detail.type')}>{doc.mimeType}</Fact>
            <Fact label={t('detail.created')}>{formatDateTime(doc.createdAt, language)}</Fact>
            <Fact label={t('detail.consent')}>{formatDateTime(doc.consentTimestamp, language)}</Fact>
            {cid && <IpfsFacts id={doc.id} cid={cid} />}
          </dl>
          {cid && <p className="muted small">{t('detail.ipfsNote')}</p>}
        </div>
      </section>

      <section className="section">
        <h2>{t('detail.proofs')}</h2>
        <div className="grid-2">
          <CertificateCard id={doc.id} />
          <TimestampCard id={doc.id} />
          <NotarySignatureCard id={doc.id} />
        </div>
      </section>

      {doc.sourceType === 'web-capture' && (
        <section className="section">
          <AtaCard id={doc.id} />
        </section>
      )}

      <section className="section">
        <h2>{t('detail.verifyLocal')}</h2>
        <VerifyLocal doc={doc} />
      </section>
    </div>
  );
}

function BackLink() {
  const { t } = useI18n();
  return (
    <button type="button" className="back-link" onClick={() => navigate({ name: 'documents' })}>
      <Icon name="back" size={16} /> {t('detail.back')}
    </button>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="fact">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/**
 * Source, CID and gateway link of a document imported from IPFS. The link is the server's (its view URL on
 * the public gateway), asked once per document: it names the CID, so it does not change while shown.
 */
function IpfsFacts({ id, cid }: { id: string; cid: string }) {
  const { t } = useI18n();
  const { bridge } = useApp();
  const [link, setLink] = useState<GatewayLink | null>(null);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async () => {
    setError(null);
    try {
      setLink(await bridge.gatewayLink(id));
    } catch (e) {
      setError(e);
    }
  }, [bridge, id]);

  useEffect(() => {
    setLink(null);
    void load();
  }, [load]);

  return (
    <>
      <Fact label={t('detail.source')}>{t('detail.sourceIpfs')}</Fact>
      <Fact label={t('detail.cid')}>
        <CopyValue value={cid} testId="detail-cid" />
      </Fact>
      <Fact label={t('detail.gateway')}>
        {link ? (
          <span className="gateway-link" data-testid="detail-gateway">
            <ExternalLink href={link.url}>{t('detail.openGateway')}</ExternalLink>
            <CopyValue value={link.url} />
          </span>
        ) : error !== null ? (
          <ErrorNotice error={error} onRetry={() => void load()} compact />
        ) : (
          <span className="muted small">
            <Spinner /> {t('detail.gatewayLoading')}
          </span>
        )}
      </Fact>
    </>
  );
}

function AnchorCard({
  title,
  status,
  network,
  rows,
  links,
  devnet,
  testId,
}: {
  title: string;
  status: 'pending' | 'registered';
  network: string | null;
  rows: [string, string | null][];
  links: ({ href: string; label: string } | null)[];
  devnet: boolean;
  testId: string;
}) {
  const { t } = useI18n();
  return (
    <div className={`card anchor anchor-${status}`} data-testid={testId} data-status={status}>
      <div className="anchor-head">
        <h3>{title}</h3>
        <StatusBadge status={status} />
      </div>
      {network && (
        <div className="anchor-network muted small">
          {t('detail.network')}: {network}
        </div>
      )}
      {status === 'pending' ? (
        <p className="muted anchor-waiting">
          <Spinner /> {t('detail.waiting')}
        </p>
      ) : (
        <dl className="facts facts-compact">
          {rows
            .filter((r): r is [string, string] => r[1] !== null)
            .map(([label, value]) => (
              <Fact key={label} label={label}>
                {/^(0x)?[0-9a-f]{40,}$/i.test(value) ? <CopyValue value={value} /> : value}
              </Fact>
            ))}
        </dl>
      )}
      {status === 'registered' && (
        <div className="anchor-links">
          {links
            .filter((l) => l !== null)
            .map((l) => (
              <ExternalLink key={l.href} href={l.href}>
                {l.label}
              </ExternalLink>
            ))}
          {devnet && <span className="muted small">{t('detail.noExplorer')}</span>}
        </div>
      )}
    </div>
  );
}

function CertificateCard({ id }: { id: string }) {
  const { t, language } = useI18n();
  const { bridge } = useApp();
  const [busy, setBusy] = useState<'save' | 'open' | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async (what: 'save' | 'open') => {
    setBusy(what);
    setError(null);
    setResult(null);
    try {
      const saved =
        what === 'save'
          ? await bridge.saveCertificate(id, language)
          : await bridge.openCertificate(id, language);
      if (saved) {
        setResult(
          what === 'open'
            ? t('detail.opened', { file: saved.fileName })
            : saved.signed === 'pades'
              ? t('detail.savedSigned', { file: saved.fileName })
              : t('detail.savedUnsigned', { file: saved.fileName }),
        );
      }
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="card proof-card">
      <h3>{t('detail.certificate')}</h3>
      <p className="muted small">{t('detail.certificateHelp')}</p>
      <div className="button-row">
        <button
          type="button"
          className="button button-primary"
          data-testid="save-certificate"
          disabled={busy !== null}
          onClick={() => void run('save')}
        >
          {busy === 'save' ? <Spinner /> : <Icon name="download" size={16} />} {t('detail.saveCertificate')}
        </button>
        <button type="button" className="button" disabled={busy !== null} onClick={() => void run('open')}>
          {busy === 'open' ? <Spinner /> : <Icon name="external" size={16} />} {t('detail.openCertificate')}
        </button>
      </div>
      {result && (
        <div data-testid="certificate-result">
          <Notice kind="ok">{result}</Notice>
        </div>
      )}
      {error !== null && <ErrorNotice error={error} compact />}
    </div>
  );
}

/** The CPF problem's sentence. */
const CPF_TEXT = {
  empty: 'ata.cpfEmpty',
  format: 'ata.cpfFormat',
  'check-digits': 'ata.cpfCheckDigits',
} as const;

/**
 * The ata notarial draft of a web capture: the requester's form (the CPF checked as typed, before anything is sent)
 * and the draft's download; the last draft again without the form.
 */
function AtaCard({ id }: { id: string }) {
  const { t } = useI18n();
  const { bridge } = useApp();
  const [form, setForm] = useState<AtaForm>({ name: '', cpf: '', qualification: '', email: '' });
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState<'request' | 'again' | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const check = ataRequest(form);
  const field = (key: keyof AtaForm) => ({
    value: form[key],
    disabled: busy !== null,
    'data-testid': `ata-${key}`,
    onChange: (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value }),
  });
  const run = async (what: 'request' | 'again') => {
    setTouched(true);
    if (what === 'request' && !check.ok) return;
    setBusy(what);
    setError(null);
    setResult(null);
    try {
      const saved = await bridge.saveAtaDraft(id, what === 'request' && check.ok ? check.request : null);
      if (saved) setResult(t('ata.saved', { file: saved.fileName }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  const nameProblem = !check.ok && touched ? check.name : null;
  // The CPF is checked as it is typed, once it has 11 digits or the form was sent.
  const cpfProblem = !check.ok && (touched || form.cpf.replace(/\D/g, '').length >= 11) ? check.cpf : null;
  return (
    <div className="card proof-card" data-testid="ata-card">
      <h3>{t('ata.title')}</h3>
      <p className="muted small">{t('ata.help')}</p>
      <label className="field">
        <span>{t('ata.name')}</span>
        <input {...field('name')} maxLength={200} autoComplete="name" />
        {nameProblem && (
          <small className="field-problem" role="alert">
            {t(nameProblem === 'empty' ? 'ata.nameEmpty' : 'ata.nameTooLong')}
          </small>
        )}
      </label>
      <label className="field">
        <span>{t('ata.cpf')}</span>
        <input
          {...field('cpf')}
          maxLength={14}
          inputMode="numeric"
          placeholder="000.000.000-00"
          aria-invalid={cpfProblem !== null}
        />
        {cpfProblem && (
          <small className="field-problem" role="alert" data-testid="ata-cpf-error">
            {t(CPF_TEXT[cpfProblem])}
          </small>
        )}
      </label>
      <label className="field">
        <span>{t('ata.qualification')}</span>
        <input {...field('qualification')} maxLength={500} />
      </label>
      <label className="field">
        <span>{t('ata.email')}</span>
        <input {...field('email')} type="email" maxLength={254} autoComplete="email" />
      </label>
      <div className="button-row">
        <button
          type="button"
          className="button button-primary"
          data-testid="ata-request"
          disabled={busy !== null}
          onClick={() => void run('request')}
        >
          {busy === 'request' ? <Spinner /> : <Icon name="download" size={16} />} {t('ata.request')}
        </button>
        <button
          type="button"
          className="button"
          data-testid="ata-again"
          disabled={busy !== null}
          onClick={() => void run('again')}
        >
          {busy === 'again' ? <Spinner /> : <Icon name="download" size={16} />} {t('ata.again')}
        </button>
      </div>
      {result && <Notice kind="ok">{result}</Notice>}
      {error !== null && <ErrorNotice error={error} compact />}
    </div>
  );
}

function TimestampCard({ id }: { id: string }) {
  const { t } = useI18n();
  const { bridge } = useApp();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const save = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const saved = await bridge.saveTimestamp(id);
      if (saved) setResult(t('detail.savedTimestamp', { file: saved.fileName }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const noTsa = isClientError(error) && error.kind === 'unavailable';
  return (
    <div className="card proof-card">
      <h3>{t('detail.timestamp')}</h3>
      <p className="muted small">{t('detail.timestampHelp')}</p>
      <div className="button-row">
        <button
          type="button"
          className="button"
          data-testid="save-timestamp"
          disabled={busy}
          onClick={() => void save()}
        >
          {busy ? <Spinner /> : <Icon name="clock" size={16} />} {t('detail.saveTimestamp')}
        </button>
      </div>
      {result && (
        <div data-testid="timestamp-result">
          <Notice kind="ok">{result}</Notice>
        </div>
      )}
      {noTsa ? (
        <Notice kind="info">{t('detail.noTsa')}</Notice>
      ) : (
        error !== null && <ErrorNotice error={error} compact />
      )}
    </div>
  );
}

function VerifyLocal({ doc }: { doc: DocumentDto }) {
  const { t } = useI18n();
  const { bridge } = useApp();
  const [file, setFile] = useState<LocalFile | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [result, setResult] = useState<HashComparisonDto | null>(null);
  const [error, setError] = useState<unknown>(null);

  const check = async (files: LocalFile[]) => {
    const chosen = files[0];
    if (!chosen) return;
    setFile(chosen);
    setResult(null);
    setError(null);
    setProgress(0);
    try {
      const hash = await bridge.hashFile(chosen.id, crypto.randomUUID(), ({ loaded, total }) =>
        setProgress(percent(loaded, total)),
      );
      setResult(await bridge.compareHash(doc.id, hash));
    } catch (e) {
      setError(e);
    } finally {
      setProgress(null);
    }
  };

  return (
    <div className="card">
      <DropZone
        compact
        testId="verify-local-dropzone"
        onFiles={(files) => void bridge.dropFiles(files).then(check, setError)}
        onPick={() => void bridge.pickFiles().then(check, setError)}
        title={file ? file.name : t('detail.verifyDrop')}
        hint={file ? undefined : t('detail.verifyLocalHelp')}
        buttonLabel={t('detail.verifyPick')}
      />
      {progress !== null && (
        <div className="stack-small">
          <span className="muted small">{t('detail.hashing', { pct: progress })}</span>
          <ProgressBar value={progress} />
        </div>
      )}
      {result && (
        <div
          className={`compare ${result.hashMatches ? 'compare-match' : 'compare-mismatch'}`}
          data-testid="compare-result"
          data-match={String(result.hashMatches)}
        >
          <div className="compare-head">
            <Icon name={result.hashMatches ? 'check' : 'x'} size={22} />
            <strong>{result.hashMatches ? t('detail.match') : t('detail.mismatch')}</strong>
          </div>
          <dl className="facts facts-compact">
            <Fact label={t('detail.stored')}>
              <code>{result.storedHash}</code>
            </Fact>
            <Fact label={t('detail.provided')}>
              <code>{result.providedHash}</code>
            </Fact>
          </dl>
        </div>
      )}
      {error !== null && <ErrorNotice error={error} compact />}
    </div>
  );
}
