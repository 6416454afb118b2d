import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121091721 as m0 } from './Migration20261121091721';

/** Every migration in order. `npm run db:migration:create -w @notary/indicator-catalog` regenerates this list. */
export const migrationsList: MigrationObject[] = [{ name: 'Migration20261121091721', class: m0 }];
