import { type FormEvent, useEffect, useRef, useState } from 'react';
import type { SessionInfo } from '../../common/bridge';
import { useApp } from '../app-context';
import { useI18n } from '../i18n';
import { navigate } from '../router';
import { ErrorNotice, Icon, Notice } from '../ui';

/** E-mail one-time code sign-in (docs/api.md, Signing in): e-mail -> code mailed -> 6 digits -> session. */
export function SignIn({
  expired,
  lastEmail,
  onSignedIn,
}: {
  expired: boolean;
  lastEmail: string | null;
  onSignedIn: (session: SessionInfo) => void;
}) {
  const { t } = useI18n();
  const { bridge, settings } = useApp();
  const [email, setEmail] = useState(lastEmail ?? '');
  const [code, setCode] = useState('');
  const [step, setStep] = useState<'email' | 'code'>('email');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const emailRef = useRef<HTMLInputElement>(null);
  const codeRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    (step === 'email' ? emailRef : codeRef).current?.focus();
  }, [step]);

  const sendCode = async (e?: FormEvent) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await bridge.requestCode(email.trim());
      setStep('code');
      setCode('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const signIn = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await bridge.signIn(email.trim(), code.trim()));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <div className="auth-screen">
      <div className="auth-brand">
        <Icon name="seal" size={44} />
        <div>
          <div className="auth-brand-name">{t('app.name')}</div>
          <div className="auth-brand-tagline">{t('app.tagline')}</div>
        </div>
      </div>
      <div className="card auth-card">
        <h1>{t('signin.title')}</h1>
        {expired && step === 'email' && (
          <div data-testid="session-expired">
            <Notice kind="warn">{t('signin.expired')}</Notice>
          </div>
        )}
        {step === 'email' ? (
          <form onSubmit={sendCode} className="form">
            <p className="muted">{t('signin.subtitle')}</p>
            <label className="field">
              <span>{t('signin.email')}</span>
              <input
                type="email"
                name="email"
                autoComplete="email"
                required
                maxLength={254}
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                ref={emailRef}
              />
            </label>
            {error !== null && <ErrorNotice error={error} compact />}
            <button
              type="submit"
              className="button button-primary button-block"
              disabled={busy || !email.trim()}
            >
              {busy ? t('signin.sending') : t('signin.sendCode')}
            </button>
          </form>
        ) : (
          <form onSubmit={signIn} className="form">
            <p className="muted">{t('signin.codeSent', { email })}</p>
            <label className="field">
              <span>{t('signin.code')}</span>
              <input
                name="code"
                className="code-input"
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9]{6}"
                maxLength={6}
                required
                value={code}
                onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
                ref={codeRef}
              />
            </label>
            {error !== null && <ErrorNotice error={error} compact />}
            <button
              type="submit"
              className="button button-primary button-block"
              disabled={busy || code.length !== 6}
            >
              {busy ? t('signin.signingIn') : t('signin.submit')}
            </button>
            <div className="form-links">
              <button type="button" className="link-button" onClick={() => setStep('email')}>
                {t('signin.otherEmail')}
              </button>
              <button type="button" className="link-button" onClick={() => void sendCode()} disabled={busy}>
                {t('signin.resend')}
              </button>
            </div>
          </form>
        )}
      </div>
      <div className="auth-footer">
        <span>
          {t('signin.server')}: <code>{settings.serverUrl}</code>
          {settings.serverUrlEditable && (
            <>
              {' · '}
              <button type="button" className="link-button" onClick={() => navigate({ name: 'settings' })}>
                {t('signin.changeServer')}
              </button>
            </>
          )}
        </span>
        <button type="button" className="link-button" onClick={() => navigate({ name: 'verify' })}>
          <Icon name="verify" size={15} /> {t('signin.verifyWithout')}
        </button>
      </div>
    </div>
  );
}
