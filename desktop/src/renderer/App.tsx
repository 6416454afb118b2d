import { errorMessage, type OnchainInfoDto } from '@notary/shared';
import { Component, type ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import type { AppSettings, Bridge, Language, SessionInfo } from '../common/bridge';
import { AppContext, type AppContextValue, useApp, useOptionalApp } from './app-context';
import { I18nContext, initialLanguage, translator, useI18n } from './i18n';
import { navigate, type Route, routeHref, useRoute } from './router';
import { DocumentDetail } from './screens/DocumentDetail';
import { Documents } from './screens/Documents';
import { Join } from './screens/Join';
import { MonitorDetail, Monitors } from './screens/Monitors';
import { Notarize } from './screens/Notarize';
import { Settings } from './screens/Settings';
import { SignIn } from './screens/SignIn';
import { tenantName } from './screens/tenant';
import { Verify } from './screens/Verify';
import { ErrorNotice, Icon, type IconName, Spinner, useWindowDropGuard } from './ui';
import { UploadQueue } from './upload-queue';

type AuthState =
  | { status: 'loading' }
  | { status: 'signed-out'; expired: boolean; lastEmail: string | null }
  | { status: 'signed-in'; session: SessionInfo };

/**
 * The whole UI: loads settings and the session, then shows the sign-in screen, the public verify screen, or
 * the signed-in shell (sidebar, tenant switcher, screens). Every failure ends in a message, never a blank page.
 */
export function App({ bridge }: { bridge: Bridge }) {
  const [settings, setSettings] = useState<AppSettings | null>(null);
  const [language, setLanguageState] = useState<Language>(() => initialLanguage(null, navigator.languages));
  const [auth, setAuth] = useState<AuthState>({ status: 'loading' });
  const [startupError, setStartupError] = useState<unknown>(null);
  const [onchainInfo, setOnchainInfo] = useState<OnchainInfoDto | null>(null);
  const queue = useMemo(() => new UploadQueue(bridge), [bridge]);
  const route = useRoute();
  useWindowDropGuard();

  const start = useCallback(async () => {
    setStartupError(null);
    setAuth({ status: 'loading' });
    try {
      const s = await bridge.getSettings();
      setSettings(s);
      setLanguageState(initialLanguage(s.language, navigator.languages));
      const state = await bridge.currentSession();
      setAuth(
        state.state === 'signed-in'
          ? { status: 'signed-in', session: state.session }
          : { status: 'signed-out', expired: state.expired, lastEmail: state.lastEmail },
      );
      bridge.onchainInfo().then(setOnchainInfo, () => setOnchainInfo(null));
    } catch (e) {
      setStartupError(e);
    }
  }, [bridge]);

  useEffect(() => {
    void start();
  }, [start]);

  const sessionLost = useCallback(() => {
    queue.reset();
    setAuth((prev) => ({
      status: 'signed-out',
      expired: true,
      lastEmail: prev.status === 'signed-in' ? prev.session.me.email : null,
    }));
  }, [queue]);

  useEffect(() => bridge.onSessionExpired(sessionLost), [bridge, sessionLost]);

  useEffect(() => {
    document.documentElement.lang = language === 'pt' ? 'pt-BR' : 'en';
  }, [language]);

  const t = useMemo(() => translator(language), [language]);
  const i18n = useMemo(() => ({ language, t }), [language, t]);
  const setLanguage = (l: Language) => {
    setLanguageState(l);
    void bridge.setLanguage(l).catch(() => undefined);
  };

  if (!settings) {
    return (
      <I18nContext.Provider value={i18n}>
        <div className="center-screen">
          {startupError ? (
            <StartupFailure error={startupError} serverUrl="" onRetry={() => void start()} />
          ) : (
            <Spinner />
          )}
        </div>
      </I18nContext.Provider>
    );
  }

  const session = auth.status === 'signed-in' ? auth.session : null;
  const context: AppContextValue = {
    bridge,
    queue,
    settings,
    session,
    onchainInfo,
    onSessionLost: sessionLost,
    setSession: (s) => setAuth({ status: 'signed-in', session: s }),
    setSettings: (s) => {
      setSettings(s);
      // Another server: its own session (main dropped the old one) and chains.
      void start();
    },
  };

  let body: ReactNode;
  if (startupError && route.name !== 'settings') {
    body = (
      <div className="center-screen">
        <StartupFailure error={startupError} serverUrl={settings.serverUrl} onRetry={() => void start()} />
      </div>
    );
  } else if (auth.status === 'loading' && !startupError) {
    body = (
      <div className="center-screen">
        <Spinner />
      </div>
    );
  } else if (!session) {
    body =
      route.name === 'verify' || route.name === 'settings' ? (
        <PublicFrame language={language} onLanguage={setLanguage}>
          {route.name === 'verify' ? <Verify /> : <Settings onLanguage={setLanguage} />}
        </PublicFrame>
      ) : (
        <SignIn
          expired={auth.status === 'signed-out' && auth.expired}
          lastEmail={auth.status === 'signed-out' ? auth.lastEmail : null}
          onSignedIn={(s) => {
            setAuth({ status: 'signed-in', session: s });
            if (route.name !== 'join') navigate({ name: 'documents' });
          }}
        />
      );
  } else {
    body = (
      <Shell
        session={session}
        route={route}
        language={language}
        onLanguage={setLanguage}
        onSignOut={async () => {
          queue.reset();
          try {
            await bridge.signOut();
          } finally {
            setAuth({ status: 'signed-out', expired: false, lastEmail: session.me.email });
          }
        }}
      >
        <Screen route={route} onLanguage={setLanguage} />
      </Shell>
    );
  }

  return (
    <I18nContext.Provider value={i18n}>
      <AppContext.Provider value={context}>
        <ErrorBoundary>{body}</ErrorBoundary>
      </AppContext.Provider>
    </I18nContext.Provider>
  );
}

function Screen({ route, onLanguage }: { route: Route; onLanguage: (l: Language) => void }) {
  const { session } = useApp();
  // Keyed by tenant: switching tenants re-reads everything.
  const key = `${session?.me.tenantId ?? ''}:${routeHref(route)}`;
  switch (route.name) {
    case 'document':
      return <DocumentDetail key={key} id={route.id} />;
    case 'notarize':
      return <Notarize key={key} />;
    case 'monitors':
      return <Monitors key={key} />;
    case 'monitor':
      return <MonitorDetail key={key} id={route.id} />;
    case 'verify':
      return <Verify key={key} />;
    case 'settings':
      return <Settings key={key} onLanguage={onLanguage} />;
    case 'join':
      return <Join key={key} invitationId={route.invitationId} />;
    default:
      return <Documents key={key} />;
  }
}

const NAV: {
  route: Route;
  icon: IconName;
  label: 'nav.documents' | 'nav.notarize' | 'nav.monitors' | 'nav.verify' | 'nav.settings';
}[] = [
  { route: { name: 'documents' }, icon: 'documents', label: 'nav.documents' },
  { route: { name: 'notarize' }, icon: 'notarize', label: 'nav.notarize' },
  { route: { name: 'monitors' }, icon: 'clock', label: 'nav.monitors' },
  { route: { name: 'verify' }, icon: 'verify', label: 'nav.verify' },
  { route: { name: 'settings' }, icon: 'settings', label: 'nav.settings' },
];

function Brand() {
  const { t } = useI18n();
  return (
    <div className="brand">
      <Icon name="seal" size={30} />
      <div>
        <div className="brand-name">{t('app.name')}</div>
        <div className="brand-tagline">{t('app.tagline')}</div>
      </div>
    </div>
  );
}

function LanguageSwitch({ language, onLanguage }: { language: Language; onLanguage: (l: Language) => void }) {
  return (
    <div className="lang-switch" title="Idioma / Language">
      {(['pt', 'en'] as const).map((l) => (
        <button
          key={l}
          type="button"
          className={language === l ? 'active' : ''}
          onClick={() => onLanguage(l)}
        >
          {l.toUpperCase()}
        </button>
      ))}
    </div>
  );
}

function Shell({
  session,
  route,
  language,
  onLanguage,
  onSignOut,
  children,
}: {
  session: SessionInfo;
  route: Route;
  language: Language;
  onLanguage: (l: Language) => void;
  onSignOut: () => Promise<void>;
  children: ReactNode;
}) {
  const { t } = useI18n();
  const { bridge, queue, setSession } = useApp();
  const [switching, setSwitching] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const active = route.name === 'document' ? 'documents' : route.name === 'monitor' ? 'monitors' : route.name;

  const switchTenant = async (value: string) => {
    setSwitching(true);
    setError(null);
    try {
      queue.reset();
      setSession(await bridge.setTenant(value === '' ? null : value));
      navigate({ name: 'documents' });
    } catch (e) {
      setError(e);
    } finally {
      setSwitching(false);
    }
  };

  return (
    <div className="shell">
      <aside className="sidebar">
        <Brand />
        <nav className="nav">
          {NAV.map((item) => (
            <a
              key={item.route.name}
              href={routeHref(item.route)}
              className={`nav-item${active === item.route.name ? ' active' : ''}`}
              aria-current={active === item.route.name ? 'page' : undefined}
            >
              <Icon name={item.icon} />
              {t(item.label)}
            </a>
          ))}
        </nav>
        <div className="sidebar-foot">
          <LanguageSwitch language={language} onLanguage={onLanguage} />
        </div>
      </aside>
      <div className="main">
        <header className="topbar">
          <label className="tenant">
            <span className="tenant-label">{t('tenant.label')}</span>
            <select
              data-testid="tenant-select"
              value={session.me.orgId ?? ''}
              disabled={switching}
              onChange={(e) => void switchTenant(e.target.value)}
            >
              <option value="">{t('tenant.personal')}</option>
              {session.organizations.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          </label>
          <span className="role-chip" title={tenantName(t, session)}>
            {t(`tenant.role.${session.me.role}`)}
          </span>
          <span className="spacer" />
          <span className="user" data-testid="user-email">
            {session.me.email}
          </span>
          <button type="button" className="button button-ghost button-small" onClick={() => void onSignOut()}>
            <Icon name="signOut" size={16} /> {t('nav.signOut')}
          </button>
        </header>
        {error !== null && (
          <div className="topbar-error">
            <ErrorNotice error={error} compact />
          </div>
        )}
        <main className="content">{children}</main>
      </div>
    </div>
  );
}

function PublicFrame({
  language,
  onLanguage,
  children,
}: {
  language: Language;
  onLanguage: (l: Language) => void;
  children: ReactNode;
}) {
  const { t } = useI18n();
  return (
    <div className="public-frame">
      <header className="public-top">
        <Brand />
        <span className="spacer" />
        <LanguageSwitch language={language} onLanguage={onLanguage} />
        <a className="button button-small" href="#/documents">
          {t('signin.submit')}
        </a>
      </header>
      <main className="content">{children}</main>
    </div>
  );
}

function StartupFailure({
  error,
  serverUrl,
  onRetry,
}: {
  error: unknown;
  serverUrl: string;
  onRetry: () => void;
}) {
  const { t } = useI18n();
  return (
    <div className="card failure-card" data-testid="startup-failure">
      <Icon name="alert" size={32} />
      <h1>{t('server.downTitle')}</h1>
      {serverUrl && <code>{serverUrl}</code>}
      <ErrorNoticeStandalone error={error} serverUrl={serverUrl} />
      <div className="button-row">
        <button type="button" className="button button-primary" onClick={onRetry}>
          {t('server.retry')}
        </button>
        <a className="button" href="#/verify">
          {t('nav.verify')}
        </a>
        <a className="button button-ghost" href="#/settings">
          {t('nav.settings')}
        </a>
      </div>
    </div>
  );
}

/** ErrorNotice needs the app context; before settings load there is none, so this one stands alone. */
function ErrorNoticeStandalone({ error, serverUrl }: { error: unknown; serverUrl: string }) {
  const ctx = useOptionalApp();
  if (ctx) return <ErrorNotice error={error} />;
  const message = errorMessage(error);
  return (
    <p className="muted">
      {serverUrl} {message}
    </p>
  );
}

interface BoundaryState {
  error: Error | null;
}

/** Last line of defence: a rendering bug shows a message and a reload button, never a blank window. */
class ErrorBoundary extends Component<{ children: ReactNode }, BoundaryState> {
  override state: BoundaryState = { error: null };

  static getDerivedStateFromError(error: Error): BoundaryState {
    return { error };
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return <CrashScreen error={this.state.error} />;
  }
}

function CrashScreen({ error }: { error: Error }) {
  const { t } = useI18n();
  return (
    <div className="center-screen">
      <div className="card failure-card" role="alert">
        <Icon name="alert" size={32} />
        <h1>{t('common.crash')}</h1>
        <details>
          <summary>{t('common.details')}</summary>
          <pre>{error.message}</pre>
        </details>
        <button type="button" className="button button-primary" onClick={() => window.location.reload()}>
          {t('common.reload')}
        </button>
      </div>
    </div>
  );
}
