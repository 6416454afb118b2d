import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121061512 as m0 } from './Migration20261121061512';
import { Migration20261121071240 as m1 } from './Migration20261121071240';
import { Migration20261121071806 as m2 } from './Migration20261121071806';
import { Migration20261121074559 as m3 } from './Migration20261121074559';
import { Migration20261121081826 as m4 } from './Migration20261121081826';
import { Migration20261121085418 as m5 } from './Migration20261121085418';
import { Migration20261121085747 as m6 } from './Migration20261121085747';
import { Migration20261125095459 as m7 } from './Migration20261125095459';
import { Migration20261126074617 as m8 } from './Migration20261126074617';
import { Migration20261126170100 as m9 } from './Migration20261126170100';
import { Migration20261126170200 as m10 } from './Migration20261126170200';
import { Migration20261126170300 as m11 } from './Migration20261126170300';
import { Migration20261129080000 as m12 } from './Migration20261129080000';
import { Migration20261129080100 as m13 } from './Migration20261129080100';
import { Migration20261129140000 as m14 } from './Migration20261129140000';
import { Migration20261129142419 as m15 } from './Migration20261129142419';
import { Migration20261129143000 as m16 } from './Migration20261129143000';
import { Migration20261129150000 as m17 } from './Migration20261129150000';
import { Migration20261129171500 as m18 } from './Migration20261129171500';
import { Migration20261129172000 as m19 } from './Migration20261129172000';
import { Migration20261130090000 as m20 } from './Migration20261130090000';

/** Every migration in order. `npm run db:migration:create -w @notary/server` regenerates this list. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121061512', class: m0 },
  { name: 'Migration20261121071240', class: m1 },
  { name: 'Migration20261121071806', class: m2 },
  { name: 'Migration20261121074559', class: m3 },
  { name: 'Migration20261121081826', class: m4 },
  { name: 'Migration20261121085418', class: m5 },
  { name: 'Migration20261121085747', class: m6 },
  { name: 'Migration20261125095459', class: m7 },
  { name: 'Migration20261126074617', class: m8 },
  { name: 'Migration20261126170100', class: m9 },
  { name: 'Migration20261126170200', class: m10 },
  { name: 'Migration20261126170300', class: m11 },
  { name: 'Migration20261129080000', class: m12 },
  { name: 'Migration20261129080100', class: m13 },
  { name: 'Migration20261129140000', class: m14 },
  { name: 'Migration20261129142419', class: m15 },
  { name: 'Migration20261129143000', class: m16 },
  { name: 'Migration20261129150000', class: m17 },
  { name: 'Migration20261129171500', class: m18 },
  { name: 'Migration20261129172000', class: m19 },
  { name: 'Migration20261130090000', class: m20 },
];
