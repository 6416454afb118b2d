/**
 * A process that deletes one organization the way an operator's script would (`deleteOrganizationNow`), for
 * the resume test: `node --import tsx org-deletion-run.testing.ts <tenant id> <batch size> [<freeze after
 * batch>]`, configured by the service's environment (DATABASE_URL, DATA_DIR, SMTP_URL). Each progress line
 * goes to stdout. With a freeze batch, the process stops dead right after printing that batch's line (the
 * batch committed, the next not begun), so that the test's SIGKILL lands at the same point every time.
 */
import { createLogger } from '@notary/platform/log';
import { createCore, publicUrlFor, serviceLogger } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { deleteOrganizationNow } from '@notary/server/domain/org/deletion/index';

const [tenantId, batch, freezeAfter] = process.argv.slice(2);
if (!tenantId || !batch)
  throw new Error('usage: org-deletion-run.testing.ts <tenant id> <batch size> [<freeze>]');
const config = loadConfig();
const core = await createCore(config, publicUrlFor(config, config.port), {
  log: serviceLogger(config, 'stderr'),
});
const frozen = new Int32Array(new SharedArrayBuffer(4));
// The run's lines as plain text: info (steps and batches) to stdout, warnings and errors to stderr.
const log = createLogger({
  level: 'info',
  format: 'json',
  destination: {
    write(line: string) {
      const { level, msg } = JSON.parse(line) as { level: number; msg: string };
      if (level >= 40) {
        process.stderr.write(`${msg}\n`);
        return;
      }
      process.stdout.write(`${msg}\n`);
      if (freezeAfter && msg.includes(`batch ${freezeAfter} done`)) {
        // Blocks this thread for good (until the SIGKILL): nothing after this batch runs.
        Atomics.wait(frozen, 0, 0);
      }
    },
  },
});
const outcome = await deleteOrganizationNow(
  core.db.fork(),
  {
    storage: core.deps.storage,
    mailer: core.deps.mailer,
    directory: core.deps.directory,
    batchSize: Number(batch),
    log,
  },
  tenantId,
);
process.stdout.write(`outcome ${outcome}\n`);
await core.close();
