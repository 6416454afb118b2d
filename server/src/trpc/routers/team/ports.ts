import type { InvitationPorts } from '../../../domain/team/service';
import type { Context } from '../../context';

/** The team domain's ports for this request (shared by the team procedures). */
export function teamPorts(ctx: Context): InvitationPorts {
  return {
    em: ctx.em(),
    directory: ctx.deps.directory,
    databaseKind: ctx.deps.db.kind,
    mailer: ctx.deps.mailer,
    publicUrl: ctx.deps.publicUrl,
    invitationMailQuota: ctx.deps.invitationMailQuota,
  };
}
