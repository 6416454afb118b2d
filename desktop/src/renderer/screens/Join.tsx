import { useState } from 'react';
import { useApp } from '../app-context';
import { useI18n } from '../i18n';
import { navigate } from '../router';
import { ErrorNotice, Notice, PageHeader } from '../ui';

/** The invitation link's page (`#/join/<id>`, docs/team.md, Team): accept, then switch to the organization. */
export function Join({ invitationId }: { invitationId: string }) {
  const { t } = useI18n();
  const { bridge, setSession } = useApp();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const accept = async () => {
    setBusy(true);
    setError(null);
    try {
      const orgId = await bridge.acceptInvitation(invitationId);
      setSession(await bridge.setTenant(orgId));
      setDone(true);
      setTimeout(() => navigate({ name: 'documents' }), 1200);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="page page-narrow">
      <PageHeader title={t('join.title')} />
      <div className="card section-card">
        {done ? (
          <Notice kind="ok">{t('join.accepted')}</Notice>
        ) : (
          <button
            type="button"
            className="button button-primary"
            disabled={busy}
            onClick={() => void accept()}
          >
            {t('join.accept')}
          </button>
        )}
        {error !== null && <ErrorNotice error={error} compact />}
      </div>
    </div>
  );
}
