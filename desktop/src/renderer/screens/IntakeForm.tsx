import type { DocumentDto } from '@notary/shared';
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { useI18n } from '../i18n';
import { ErrorNotice, Icon, type IconName, Notice, Spinner } from '../ui';

/** What a check of the typed source gives: the request to send, or why not (a sentence, or null if none). */
export type IntakeCheck<R> = { ok: true; request: R } | { ok: false; problem: string | null };

/** The texts and test ids of one kind of intake (IPFS import, web capture). */
export interface IntakeTexts {
  /** Prefix of the test ids: `<prefix>-<source.key>`, `-help`, `-name`, `-consent`, `-submit`, `-busy`. */
  prefix: string;
  /** The form's own test id. */
  formTestId: string;
  title: string;
  help: string;
  source: {
    /** `cid`, `url`: names the input's test id. */
    key: string;
    label: string;
    hint: string;
    placeholder: string;
    maxLength: number;
    type?: 'url';
    autoComplete: string;
  };
  nameLabel: string;
  namePlaceholder: string;
  consentTitle: string;
  consentText: string;
  submit: string;
  submitIcon: IconName;
  busy: string;
}

/**
 * A notarization from a source the server fetches (an IPFS import, a web capture): the source is checked as typed
 * (`check` gives the sentence of a mistake once something is typed), the name is optional, and nothing is sent before
 * the consent box is ticked (consent is per item: cleared after each success). The server does the work; this waits for
 * its answer with a spinner, then shows `renderDone`.
 */
export function IntakeForm<R>({
  texts,
  readerOnly,
  onClose,
  check,
  send,
  errorText,
  renderDone,
}: {
  texts: IntakeTexts;
  readerOnly: boolean;
  onClose: () => void;
  check: (input: { source: string; name: string; consent: boolean }) => IntakeCheck<R>;
  send: (request: R) => Promise<DocumentDto>;
  /** The headline of a failure (null: the generic one). */
  errorText: (error: unknown) => string | null;
  renderDone: (doc: DocumentDto) => ReactNode;
}) {
  const { t } = useI18n();
  const ids = useId();
  const [source, setSource] = useState('');
  const [name, setName] = useState('');
  const [consent, setConsent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<DocumentDto | null>(null);
  const [error, setError] = useState<unknown>(null);

  const checked = check({ source, name, consent });
  // The sentence shows once something is typed: an empty field is not yet a mistake.
  const problem = !checked.ok && source.trim() ? checked.problem : null;
  const p = texts.prefix;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!checked.ok || busy || readerOnly) return;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await send(checked.request));
      // Consent is per item: the next one asks again.
      setSource('');
      setName('');
      setConsent(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card ipfs-import" data-testid={texts.formTestId} onSubmit={(e) => void submit(e)}>
      <div className="section-title">
        <h2>{texts.title}</h2>
        <span className="spacer" />
        <button
          type="button"
          className="icon-button"
          onClick={onClose}
          title={t('common.close')}
          aria-label={t('common.close')}
        >
          <Icon name="x" size={16} />
        </button>
      </div>
      <p className="muted small">{texts.help}</p>
      <div className="form-grid">
        <label className="field" htmlFor={`${ids}-source`}>
          <span>{texts.source.label}</span>
          <input
            id={`${ids}-source`}
            type={texts.source.type}
            className="cid-input"
            data-testid={`${p}-${texts.source.key}`}
            value={source}
            maxLength={texts.source.maxLength}
            spellCheck={false}
            autoComplete={texts.source.autoComplete}
            autoCapitalize="off"
            placeholder={texts.source.placeholder}
            aria-invalid={problem !== null}
            aria-describedby={`${ids}-source-help`}
            disabled={busy}
            onChange={(e) => setSource(e.target.value)}
          />
          <span
            id={`${ids}-source-help`}
            className={problem ? 'field-problem' : 'field-hint'}
            data-testid={`${p}-${texts.source.key}-help`}
          >
            {problem ?? texts.source.hint}
          </span>
        </label>
        <label className="field" htmlFor={`${ids}-name`}>
          <span>{texts.nameLabel}</span>
          <input
            id={`${ids}-name`}
            data-testid={`${p}-name`}
            value={name}
            maxLength={255}
            placeholder={texts.namePlaceholder}
            disabled={busy}
            onChange={(e) => setName(e.target.value)}
          />
        </label>
      </div>
      <div className="consent">
        <label className="checkbox">
          <input
            type="checkbox"
            data-testid={`${p}-consent`}
            checked={consent}
            disabled={busy}
            onChange={(e) => setConsent(e.target.checked)}
          />
          <span>
            <strong>{texts.consentTitle}</strong>
            <span className="consent-text">{texts.consentText}</span>
          </span>
        </label>
      </div>
      {readerOnly && (
        <Notice kind="warn">{t('notarize.readerRole', { role: t('tenant.role.reader') })}</Notice>
      )}
      {error !== null && <ErrorNotice error={error} compact headline={errorText(error)} />}
      {done && renderDone(done)}
      <div className="ipfs-import-actions">
        {busy && (
          <span className="muted small" role="status" data-testid={`${p}-busy`}>
            <Spinner /> {texts.busy}
          </span>
        )}
        <span className="spacer" />
        {!consent && source.trim() !== '' && !problem && (
          <span className="muted small">{t('notarize.needConsent')}</span>
        )}
        <button
          type="submit"
          className="button button-primary"
          data-testid={`${p}-submit`}
          disabled={!checked.ok || busy || readerOnly}
        >
          {busy ? <Spinner /> : <Icon name={texts.submitIcon} size={16} />} {texts.submit}
        </button>
      </div>
    </form>
  );
}
