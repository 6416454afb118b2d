import { buildTemplates } from './db-templates';

/** Once per `vitest run`, before any test file: the migrated database templates (db-templates.ts). */
export default async function setup(): Promise<void> {
  await buildTemplates();
}
