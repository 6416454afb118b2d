import { type FormEvent, useState } from 'react';
import type { NotaryPolicy, NotarySignedRecord, TokenCertificateInfo } from '../../common/bridge';
import { useApp } from '../app-context';
import { formatDate } from '../format';
import { useI18n } from '../i18n';
import { ErrorNotice, Notice, Spinner } from '../ui';

/**
 * The tabelião's own signature of a document's certificate (docs/desktop.md, the tabelião's own signature):
 * in the desktop app with the A3 token (the PIN typed here goes only to main, as bytes zeroed once sent), in
 * the web client with an A1 file opened in the page (file and password never leave it).
 */
export function NotarySignatureCard({ id }: { id: string }) {
  const { t } = useI18n();
  const { bridge } = useApp();
  const [policy, setPolicy] = useState<NotaryPolicy>('icp-brasil-ad-rt');
  const [result, setResult] = useState<NotarySignedRecord | null>(null);
  return (
    <div className="card proof-card" data-testid="notary-signature">
      <h3>{t('sign.title')}</h3>
      <p className="muted small">{t('sign.help')}</p>
      <label className="field">
        <span>{t('sign.policy')}</span>
        <select
          value={policy}
          onChange={(e) => setPolicy(e.target.value as NotaryPolicy)}
          data-testid="sign-policy"
        >
          <option value="icp-brasil-ad-rt">{t('sign.policyRt')}</option>
          <option value="icp-brasil-ad-rb">{t('sign.policyRb')}</option>
        </select>
      </label>
      {bridge.platform === 'electron' ? (
        <TokenForm id={id} policy={policy} onSigned={setResult} />
      ) : (
        <Pkcs12Form id={id} policy={policy} onSigned={setResult} />
      )}
      {result && (
        <div data-testid="sign-result">
          <Notice kind="ok">
            {t('sign.done', { signers: result.signers.map((s) => s.name).join('; ') })}
          </Notice>
        </div>
      )}
    </div>
  );
}

interface FormProps {
  id: string;
  policy: NotaryPolicy;
  onSigned: (record: NotarySignedRecord) => void;
}

/** Desktop: the token's certificates, then the PIN. */
function TokenForm({ id, policy, onSigned }: FormProps) {
  const { t, language } = useI18n();
  const { bridge, settings } = useApp();
  const [certificates, setCertificates] = useState<TokenCertificateInfo[] | null>(null);
  const [chosen, setChosen] = useState<string>('');
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!settings.tokenModulePath) return <Notice kind="info">{t('sign.noModule')}</Notice>;

  const list = async () => {
    setBusy(true);
    setError(null);
    try {
      const found = await bridge.tokenCertificates(language);
      setCertificates(found);
      const [first] = found;
      setChosen(first ? `${first.slot}:${first.id}` : '');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const sign = async (e: FormEvent) => {
    e.preventDefault();
    const certificate = certificates?.find((c) => `${c.slot}:${c.id}` === chosen);
    if (!certificate) return;
    // Bytes, so that the bridge can zero them once main has its copy; the field is emptied at once.
    const bytes = new TextEncoder().encode(pin);
    setPin('');
    setBusy(true);
    setError(null);
    try {
      onSigned(
        await bridge.signWithToken({
          documentId: id,
          certificate: { slot: certificate.slot, id: certificate.id },
          policy,
          pin: bytes,
          language,
        }),
      );
    } catch (err) {
      setError(err);
    } finally {
      bytes.fill(0);
      setBusy(false);
    }
  };
  return (
    <>
      <div className="button-row">
        <button type="button" className="button" disabled={busy} onClick={() => void list()}>
          {t('sign.list')}
        </button>
      </div>
      {certificates?.length === 0 && <Notice kind="warn">{t('sign.none')}</Notice>}
      {certificates && certificates.length > 0 && (
        <form onSubmit={sign}>
          <label className="field">
            <span>{t('sign.certificate')}</span>
            <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
              {certificates.map((c) => (
                <option key={`${c.slot}:${c.id}`} value={`${c.slot}:${c.id}`}>
                  {c.label || c.subject} — {t('sign.validUntil', { date: formatDate(c.notAfter, language) })}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span>{t('sign.pin')}</span>
            <input
              type="password"
              autoComplete="off"
              inputMode="numeric"
              maxLength={64}
              value={pin}
              onChange={(e) => setPin(e.target.value)}
            />
          </label>
          <button type="submit" className="button button-primary" disabled={busy || pin.length < 4}>
            {busy ? <Spinner /> : null} {busy ? t('sign.signing') : t('sign.submit')}
          </button>
        </form>
      )}
      {error !== null && <ErrorNotice error={error} compact />}
    </>
  );
}

/** Web client: an A1 file and its password, opened in the page. */
function Pkcs12Form({ id, policy, onSigned }: FormProps) {
  const { t, language } = useI18n();
  const { bridge } = useApp();
  const [file, setFile] = useState<File | null>(null);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const sign = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      onSigned(await bridge.signWithPkcs12({ documentId: id, file, password, policy, language }));
    } catch (err) {
      setError(err);
    } finally {
      setPassword('');
      setBusy(false);
    }
  };
  return (
    <form onSubmit={sign}>
      <label className="field">
        <span>{t('sign.file')}</span>
        <input
          type="file"
          accept=".pfx,.p12,application/x-pkcs12"
          data-testid="sign-file"
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
        />
      </label>
      <label className="field">
        <span>{t('sign.password')}</span>
        <input
          type="password"
          autoComplete="off"
          data-testid="sign-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </label>
      <p className="muted small">{t('sign.fileNote')}</p>
      <button
        type="submit"
        className="button button-primary"
        data-testid="sign-submit"
        disabled={busy || !file}
      >
        {busy ? <Spinner /> : null} {busy ? t('sign.signing') : t('sign.submit')}
      </button>
      {error !== null && <ErrorNotice error={error} compact />}
    </form>
  );
}
