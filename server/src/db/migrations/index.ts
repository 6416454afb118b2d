import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121061512 as m0 } from './Migration20261121061512';

/** Every migration in order. `npm run db:migration:create -w @notary/server` regenerates this list. */
export const migrationsList: MigrationObject[] = [{ name: 'Migration20261121061512', class: m0 }];
