import { type FormEvent, useState } from 'react';
import type { Language } from '../../common/bridge';
import { useApp } from '../app-context';
import { useI18n } from '../i18n';
import { ErrorNotice, Notice, PageHeader } from '../ui';

/** Server address (Electron), language, account. */
export function Settings({ onLanguage }: { onLanguage: (language: Language) => void }) {
  const { t, language } = useI18n();
  const { bridge, settings, setSettings, session } = useApp();
  const [url, setUrl] = useState(settings.serverUrl);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setMessage(null);
    try {
      const next = await bridge.setServerUrl(url);
      setUrl(next.serverUrl);
      setSettings(next);
      setMessage(t('settings.saved'));
    } catch (err) {
      setError(err);
    }
  };
  const check = async () => {
    setError(null);
    setMessage(null);
    try {
      await bridge.checkServer();
      setMessage(t('settings.checkOk'));
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div className="page page-narrow">
      <PageHeader title={t('settings.title')} />
      <section className="card section-card">
        <h2>{t('settings.server')}</h2>
        <p className="muted small">
          {settings.serverUrlEditable ? t('settings.serverHelp') : t('settings.serverWeb')}
        </p>
        <form className="form-row" onSubmit={save}>
          <input
            type="url"
            value={url}
            maxLength={2048}
            disabled={!settings.serverUrlEditable}
            onChange={(e) => setUrl(e.target.value)}
            aria-label={t('settings.server')}
          />
          {settings.serverUrlEditable && (
            <button type="submit" className="button button-primary" disabled={url === settings.serverUrl}>
              {t('settings.save')}
            </button>
          )}
          <button type="button" className="button" onClick={() => void check()}>
            {t('settings.check')}
          </button>
        </form>
        {message && <Notice kind="ok">{message}</Notice>}
        {error !== null && <ErrorNotice error={error} compact />}
      </section>
      {settings.serverUrlEditable && <TokenModule />}
      <section className="card section-card">
        <h2>{t('settings.language')}</h2>
        <div className="segmented">
          {(['pt', 'en'] as const).map((l) => (
            <button
              key={l}
              type="button"
              className={language === l ? 'active' : ''}
              onClick={() => onLanguage(l)}
            >
              {t(`lang.${l}`)}
            </button>
          ))}
        </div>
      </section>
      {session?.me.email && (
        <section className="card section-card">
          <h2>{t('settings.account')}</h2>
          <p>{t('settings.signedInAs', { email: session.me.email })}</p>
        </section>
      )}
    </div>
  );
}

/** The token's PKCS#11 module path (Electron: the browser cannot reach a token). */
function TokenModule() {
  const { t } = useI18n();
  const { bridge, settings, setSettings } = useApp();
  const [modulePath, setModulePath] = useState(settings.tokenModulePath ?? '');
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const save = async (next: string | null) => {
    setError(null);
    setMessage(null);
    try {
      const saved = await bridge.setTokenModule(next);
      setSettings(saved);
      setModulePath(saved.tokenModulePath ?? '');
      setMessage(t('settings.saved'));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section className="card section-card">
      <h2>{t('settings.token')}</h2>
      <p className="muted small">{t('settings.tokenHelp')}</p>
      <form
        className="form-row"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          void save(modulePath.trim() || null);
        }}
      >
        <input
          type="text"
          value={modulePath}
          maxLength={4096}
          spellCheck={false}
          placeholder="/usr/lib/libeTPkcs11.so"
          onChange={(e) => setModulePath(e.target.value)}
          aria-label={t('settings.tokenPath')}
          data-testid="token-module"
        />
        <button
          type="submit"
          className="button button-primary"
          disabled={modulePath.trim() === (settings.tokenModulePath ?? '')}
        >
          {t('settings.save')}
        </button>
        {settings.tokenModulePath && (
          <button type="button" className="button" onClick={() => void save(null)}>
            {t('settings.tokenClear')}
          </button>
        )}
      </form>
      {message && <Notice kind="ok">{message}</Notice>}
      {error !== null && <ErrorNotice error={error} compact />}
    </section>
  );
}
