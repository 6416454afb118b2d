import { z } from 'zod';

/** Success body of every organization route (spec, Organization: 200 `{ok:true}`). */
export const OrgOkSchema = z.object({ ok: z.literal(true) }).meta({ id: 'OrgOk' });
