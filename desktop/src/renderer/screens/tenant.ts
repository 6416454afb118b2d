import type { SessionInfo } from '../../common/bridge';
import type { Translate } from '../i18n';

/** Display name of the active tenant: the organization's name, or "Personal". */
export function tenantName(t: Translate, session: SessionInfo): string {
  if (session.me.tenantKind === 'personal' || !session.me.orgId) return t('tenant.personal');
  return session.organizations.find((o) => o.id === session.me.orgId)?.name ?? session.me.orgId;
}
