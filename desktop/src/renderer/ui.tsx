import { type ReactNode, useEffect, useRef, useState } from 'react';
import { type ClientError, isClientError, toClientError } from '../common/errors';
import { useApp } from './app-context';
import { overallStatus } from './format';
import { errorText, useI18n } from './i18n';

const ICONS = {
  seal: 'M12 2l2.4 1.8 3-.2.9 2.9 2.5 1.7-1 2.8 1 2.8-2.5 1.7-.9 2.9-3-.2L12 22l-2.4-1.8-3 .2-.9-2.9-2.5-1.7 1-2.8-1-2.8 2.5-1.7.9-2.9 3 .2zM8.5 12l2.3 2.3 4.7-4.7',
  documents: 'M7 3h7l5 5v13H7zM14 3v5h5M10 13h6M10 17h6',
  notarize: 'M12 16V4M7 9l5-5 5 5M5 20h14',
  verify: 'M12 3l8 3v6c0 4.5-3.4 8.3-8 9-4.6-.7-8-4.5-8-9V6zM8.5 12l2.5 2.5 4.5-4.5',
  settings:
    'M12 15a3 3 0 100-6 3 3 0 000 6zM19.4 15a1.7 1.7 0 00.3 1.8l.1.1a2 2 0 11-2.8 2.8l-.1-.1a1.7 1.7 0 00-1.8-.3 1.7 1.7 0 00-1 1.5V21a2 2 0 11-4 0v-.1a1.7 1.7 0 00-1.1-1.5 1.7 1.7 0 00-1.8.3l-.1.1a2 2 0 11-2.8-2.8l.1-.1a1.7 1.7 0 00.3-1.8 1.7 1.7 0 00-1.5-1H3a2 2 0 110-4h.1a1.7 1.7 0 001.5-1.1 1.7 1.7 0 00-.3-1.8l-.1-.1a2 2 0 112.8-2.8l.1.1a1.7 1.7 0 001.8.3H9a1.7 1.7 0 001-1.5V3a2 2 0 114 0v.1a1.7 1.7 0 001 1.5 1.7 1.7 0 001.8-.3l.1-.1a2 2 0 112.8 2.8l-.1.1a1.7 1.7 0 00-.3 1.8V9a1.7 1.7 0 001.5 1H21a2 2 0 110 4h-.1a1.7 1.7 0 00-1.5 1z',
  signOut: 'M9 21H5a2 2 0 01-2-2V5a2 2 0 012-2h4M16 17l5-5-5-5M21 12H9',
  copy: 'M9 9h11v11H9zM5 15H4V4h11v1',
  check: 'M5 12l5 5 9-10',
  x: 'M6 6l12 12M18 6L6 18',
  external: 'M14 4h6v6M20 4l-9 9M18 14v5a1 1 0 01-1 1H5a1 1 0 01-1-1V7a1 1 0 011-1h5',
  file: 'M7 3h7l5 5v13H7zM14 3v5h5',
  search: 'M11 18a7 7 0 100-14 7 7 0 000 14zM21 21l-5-5',
  refresh: 'M20 11a8 8 0 10-2.3 5.7M20 4v7h-7',
  clock: 'M12 21a9 9 0 100-18 9 9 0 000 18zM12 7v5l3 2',
  alert: 'M12 3l10 18H2zM12 10v5M12 18v.5',
  download: 'M12 4v12M7 11l5 5 5-5M5 20h14',
  back: 'M15 18l-6-6 6-6',
  globe:
    'M12 21a9 9 0 100-18 9 9 0 000 18zM3 12h18M12 3c2.5 2.7 3.8 5.7 3.8 9s-1.3 6.3-3.8 9c-2.5-2.7-3.8-5.7-3.8-9S9.5 5.7 12 3',
  link: 'M10 14a4 4 0 005.7 0l3-3a4 4 0 00-5.7-5.7l-1 1M14 10a4 4 0 00-5.7 0l-3 3a4 4 0 005.7 5.7l1-1',
} as const;
export type IconName = keyof typeof ICONS;

export function Icon({ name, size = 18 }: { name: IconName; size?: number }) {
  return (
    <svg
      className="icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <path d={ICONS[name]} />
    </svg>
  );
}

export function Spinner() {
  return <span className="spinner" aria-hidden="true" />;
}

export function ProgressBar({ value, label }: { value: number; label?: string }) {
  return (
    <div
      className="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={value}
      aria-label={label}
    >
      <div className="progress-fill" style={{ width: `${value}%` }} />
    </div>
  );
}

/** Status of one chain or of both (`overallStatus`). */
export function StatusBadge({
  status,
  label,
}: {
  status: 'registered' | 'pending' | 'partial';
  label?: string;
}) {
  const { t } = useI18n();
  const text = label ?? t(`status.${status}`);
  return (
    <span className={`badge badge-${status}`} data-status={status}>
      {status === 'registered' ? <Icon name="check" size={13} /> : <Icon name="clock" size={13} />}
      {text}
    </span>
  );
}

export function DocumentStatus({ doc }: { doc: { onchainStatus: string; stacksStatus: string } }) {
  const status = overallStatus(doc as { onchainStatus: 'pending'; stacksStatus: 'pending' });
  return <StatusBadge status={status} />;
}

/** A monospace value with a copy button (hashes, serials, transaction ids). */
export function CopyValue({ value, display, testId }: { value: string; display?: string; testId?: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      // Clipboard refused (permissions): the value is selectable anyway.
    }
  };
  return (
    <span className="copy-value">
      <code data-testid={testId} title={value}>
        {display ?? value}
      </code>
      <button
        type="button"
        className="icon-button"
        onClick={copy}
        title={t('common.copy')}
        aria-label={t('common.copy')}
      >
        <Icon name={copied ? 'check' : 'copy'} size={15} />
      </button>
    </span>
  );
}

/**
 * An error for the user: a sentence in the UI language, the server's detail underneath, and the action that
 * fits (sign in again, retry).
 */
export function ErrorNotice({
  error,
  onRetry,
  compact,
  headline: headlineOverride,
}: {
  error: unknown;
  onRetry?: () => void;
  compact?: boolean;
  /** A sentence of the screen's own (e.g. the IPFS import's), instead of the generic one of the kind. */
  headline?: string | null;
}) {
  const { t } = useI18n();
  const { settings, onSessionLost } = useApp();
  const e: ClientError = isClientError(error) ? error : toClientError(error);
  const headline = headlineOverride ?? errorText(t, e, settings.serverUrl);
  // A signing failure's message is already the person's sentence: it is the headline.
  const showDetail = e.message && !['offline', 'session-expired', 'cancelled', 'signing'].includes(e.kind);
  return (
    <div className={`notice notice-error${compact ? ' notice-compact' : ''}`} role="alert" data-kind={e.kind}>
      <Icon name="alert" />
      <div className="notice-body">
        <strong>{headline}</strong>
        {showDetail && <span className="notice-detail">{e.message}</span>}
      </div>
      {e.kind === 'session-expired' || e.kind === 'not-signed-in' ? (
        <button type="button" className="button button-small" onClick={onSessionLost}>
          {t('common.signInAgain')}
        </button>
      ) : onRetry ? (
        <button type="button" className="button button-small button-ghost" onClick={onRetry}>
          {t('server.retry')}
        </button>
      ) : null}
    </div>
  );
}

export function Notice({ kind, children }: { kind: 'ok' | 'info' | 'warn'; children: ReactNode }) {
  return (
    <div className={`notice notice-${kind}`} role="status">
      <Icon name={kind === 'ok' ? 'check' : kind === 'warn' ? 'alert' : 'clock'} />
      <div className="notice-body">{children}</div>
    </div>
  );
}

/**
 * A drop target for files (and a button to pick them). Drops anywhere on it; the browser's default of
 * opening a dropped file is prevented.
 */
export function DropZone({
  onFiles,
  onPick,
  title,
  hint,
  buttonLabel,
  compact,
  testId,
  secondary,
}: {
  onFiles: (files: File[]) => void;
  onPick: () => void;
  title: string;
  hint?: string;
  buttonLabel: string;
  compact?: boolean;
  testId?: string;
  /** Other actions beside the pick button (Notarize: "Import from IPFS", "Capture a web page"). */
  secondary?: { label: string; onClick: () => void; testId?: string; pressed?: boolean; icon?: IconName }[];
}) {
  const [over, setOver] = useState(false);
  const depth = useRef(0);
  return (
    <section
      className={`dropzone${over ? ' dropzone-over' : ''}${compact ? ' dropzone-compact' : ''}`}
      aria-label={title}
      data-testid={testId}
      onDragEnter={(e) => {
        e.preventDefault();
        depth.current += 1;
        setOver(true);
      }}
      onDragOver={(e) => e.preventDefault()}
      onDragLeave={() => {
        depth.current -= 1;
        if (depth.current <= 0) setOver(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        depth.current = 0;
        setOver(false);
        const files = Array.from(e.dataTransfer.files);
        if (files.length) onFiles(files);
      }}
    >
      <div className="dropzone-icon">
        <Icon name={compact ? 'file' : 'notarize'} size={compact ? 22 : 30} />
      </div>
      <div className="dropzone-text">
        <strong>{title}</strong>
        {hint && <small>{hint}</small>}
      </div>
      <div className="dropzone-actions">
        <button type="button" className="button dropzone-button" onClick={onPick}>
          {buttonLabel}
        </button>
        {secondary?.map((action) => (
          <button
            key={action.label}
            type="button"
            className="button button-ghost dropzone-button"
            data-testid={action.testId}
            aria-pressed={action.pressed}
            onClick={action.onClick}
          >
            <Icon name={action.icon ?? 'link'} size={16} /> {action.label}
          </button>
        ))}
      </div>
    </section>
  );
}

/** Prevents a file dropped outside a drop zone from replacing the page. */
export function useWindowDropGuard(): void {
  useEffect(() => {
    const stop = (e: DragEvent) => e.preventDefault();
    window.addEventListener('dragover', stop);
    window.addEventListener('drop', stop);
    return () => {
      window.removeEventListener('dragover', stop);
      window.removeEventListener('drop', stop);
    };
  }, []);
}

export function PageHeader({
  title,
  subtitle,
  actions,
}: {
  title: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle && <p className="page-subtitle">{subtitle}</p>}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

/** An external link: opened by the bridge (system browser in Electron, a new tab on the web). */
export function ExternalLink({ href, children }: { href: string; children: ReactNode }) {
  const { bridge } = useApp();
  return (
    <a
      href={href}
      className="external-link"
      target="_blank"
      rel="noopener noreferrer"
      onClick={(e) => {
        e.preventDefault();
        void bridge.openExternal(href).catch(() => undefined);
      }}
    >
      {children}
      <Icon name="external" size={13} />
    </a>
  );
}
