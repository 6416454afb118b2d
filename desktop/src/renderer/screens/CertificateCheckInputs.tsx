import type { LocalFile } from '../../common/bridge';
import { MAX_ANCHOR_FILES, type TrustChoice } from '../../common/certificate-check';
import { useApp } from '../app-context';
import { formatDateTime } from '../format';
import { useI18n } from '../i18n';
import { DropZone } from '../ui';

/** The trust choice as the radio buttons hold it: the picked PEM files are kept apart (switching keeps them). */
export type TrustKind = TrustChoice['kind'];

/**
 * The chain endpoints the checks 1 to 4 ask, one URL a line, in a collapsed section: the service's announced
 * ones until the user edits them.
 */
export function EndpointsEditor(props: {
  evm: string;
  stacks: string;
  onEvm: (text: string) => void;
  onStacks: (text: string) => void;
}) {
  const { t } = useI18n();
  return (
    <details className="cert-endpoints">
      <summary>{t('verify.cert.endpoints')}</summary>
      <p className="muted small">{t('verify.cert.endpointsHelp')}</p>
      <label className="field">
        <span>{t('verify.cert.evm')}</span>
        <textarea
          rows={2}
          spellCheck={false}
          data-testid="endpoints-evm"
          value={props.evm}
          onChange={(e) => props.onEvm(e.target.value)}
        />
      </label>
      <label className="field">
        <span>{t('verify.cert.stacks')}</span>
        <textarea
          rows={2}
          spellCheck={false}
          data-testid="endpoints-stacks"
          value={props.stacks}
          onChange={(e) => props.onStacks(e.target.value)}
        />
      </label>
    </details>
  );
}

/** The trust anchors of checks 5 and 6: none, the ICP-Brasil roots, or PEM files (at most `MAX_ANCHOR_FILES`). */
export function TrustAnchorsField(props: {
  kind: TrustKind;
  onKind: (kind: TrustKind) => void;
  anchorFiles: LocalFile[];
  onAnchorFiles: (files: LocalFile[]) => void;
  onError: (error: unknown) => void;
}) {
  const { t } = useI18n();
  const { bridge } = useApp();
  const { kind, onKind, anchorFiles, onError } = props;
  const chooseAnchors = (files: LocalFile[]) => {
    if (files.length > 0) props.onAnchorFiles(files.slice(0, MAX_ANCHOR_FILES));
  };
  const radio = (value: TrustKind, label: 'none' | 'icpBrasil' | 'files') => (
    <label className="radio">
      <input
        type="radio"
        name="trust"
        data-testid={`trust-${value}`}
        checked={kind === value}
        onChange={() => onKind(value)}
      />
      <span>{t(`verify.cert.trust.${label}`)}</span>
    </label>
  );
  return (
    <fieldset className="cert-trust" data-testid="trust-anchors">
      <legend>{t('verify.cert.trust')}</legend>
      <p className="muted small">{t('verify.cert.trustHelp')}</p>
      {radio('none', 'none')}
      {radio('icp-brasil', 'icpBrasil')}
      {radio('files', 'files')}
      {kind === 'files' && (
        <DropZone
          compact
          testId="anchors-dropzone"
          onFiles={(files) => void bridge.dropFiles(files).then(chooseAnchors, onError)}
          onPick={() => void bridge.pickFiles().then(chooseAnchors, onError)}
          title={
            anchorFiles.length > 0
              ? t('verify.cert.trust.chosen', { names: anchorFiles.map((f) => f.name).join(', ') })
              : t('verify.cert.trust.drop')
          }
          hint={t('verify.cert.trust.filesHint', { max: MAX_ANCHOR_FILES })}
          buttonLabel={t('verify.cert.trust.pick')}
        />
      )}
    </fieldset>
  );
}

/**
 * The moment the checks judge at: a `datetime-local` value in the computer's time zone (empty: now), shown
 * back in UTC.
 * @param at the value as UTC ISO 8601 (`localDateTimeToIso`), null when empty or not a date.
 */
export function JudgeAtField({
  text,
  at,
  onText,
}: {
  text: string;
  at: string | null;
  onText: (v: string) => void;
}) {
  const { t, language } = useI18n();
  return (
    <label className="field cert-at">
      <span>{t('verify.cert.at')}</span>
      <input
        type="datetime-local"
        step={1}
        data-testid="judge-at"
        value={text}
        onChange={(e) => onText(e.target.value)}
      />
      <small className="muted" data-testid="judge-at-utc">
        {at ? t('verify.cert.atUtc', { at: formatDateTime(at, language) }) : t('verify.cert.atHelp')}
      </small>
    </label>
  );
}
