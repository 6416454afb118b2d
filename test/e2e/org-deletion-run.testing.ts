/**
 * A process that deletes one organization the way an operator's script would (`deleteOrganizationNow`), for
 * the resume test: `node --import tsx org-deletion-run.testing.ts <tenant id> <batch size> [<freeze after
 * batch>]`, configured by the service's environment (DATABASE_URL, DATA_DIR, SMTP_URL). Each progress line
 * goes to stdout. With a freeze batch, the process stops dead right after printing that batch's line (the
 * batch committed, the next not begun), so that the test's SIGKILL lands at the same point every time.
 */
import { createCore, publicUrlFor, serviceLogger } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { deleteOrganizationNow } from '@notary/server/domain/org/deletion';

const [tenantId, batch, freezeAfter] = process.argv.slice(2);
if (!tenantId || !batch)
  throw new Error('usage: org-deletion-run.testing.ts <tenant id> <batch size> [<freeze>]');
const config = loadConfig();
const core = await createCore(config, publicUrlFor(config, config.port), {
  log: serviceLogger(config, 'stderr'),
});
const frozen = new Int32Array(new SharedArrayBuffer(4));
const outcome = await deleteOrganizationNow(
  core.db.fork(),
  {
    storage: core.deps.storage,
    mailer: core.deps.mailer,
    directory: core.deps.directory,
    batchSize: Number(batch),
    log: (line) => process.stderr.write(`${line}\n`),
    progress: (line) => {
      process.stdout.write(`${line}\n`);
      if (freezeAfter && line.includes(`batch ${freezeAfter} done`)) {
        // Blocks this thread for good (until the SIGKILL): nothing after this batch runs.
        Atomics.wait(frozen, 0, 0);
      }
    },
  },
  tenantId,
);
process.stdout.write(`outcome ${outcome}\n`);
await core.close();
