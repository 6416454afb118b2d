import type { TokenVerifier } from './adapters/identity/port';
import type { Mailer } from './adapters/mail/port';
import type { ObjectStorage } from './adapters/storage/port';
import type { Config } from './config';
import type { Database } from './db';
import type { PublicVerifyCache } from './domain/documents/verify-cache';
import type { MembershipLookup } from './domain/tenancy/resolve';

/** Everything the HTTP layer and the procedures use, built once by the composition root (`main.ts`). */
export interface AppDeps {
  config: Config;
  db: Database;
  storage: ObjectStorage;
  tokens: TokenVerifier;
  memberships: MembershipLookup;
  mailer: Mailer;
  verifyCache: PublicVerifyCache;
}
