import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '@notary/shared';
import { createCore, publicUrlFor, serviceLogger } from '../bootstrap';
import { loadConfig } from '../config';
import { type OperatorCommand, runOperatorCommand } from '../domain/operator/commands';
import { sendAdminCommand } from './admin-socket';
import { backup, restore } from './backup';
import { devnetInfo } from './devnet-info';

const USAGE = `Usage: npm run notary -- <command> [options]

  user:create --email E                         create a user (and their personal workspace); prints the user id
  org:create  --name N --owner E                create an organization owned by E; prints "<org id> <slug>"
  member:add  --org SLUG --email E --role R     add or update a member (R: owner|admin|editor|reader)
  token       --email E [--org SLUG]            print a session JWT for E (with that organization active)
  org:list                                      list organizations: "<id> <slug> <name> <member count>"
  org:members  --org SLUG                       list an organization's members: "<email> <role>"
  org:transfer --org SLUG --to E                make member E the owner; previous owners become admins
  anchors:status                                anchoring: "unbatched <n>", "batch <status> <n>",
                                                "tx <chain> <state> <n>", then failed/retrying transactions:
                                                "error <chain> <state> <batch> <attempts> <tx> <next> <last error>"
  org:deletion-status                           organization deletions under way, one line each:
                                                "<tenant id> <name> <step> <running|stopped>
                                                documents <deleted>/<total> left <n> batches <n>
                                                started <ISO> progress <ISO>", or "none"
  devnet:info                                   the running devnets' endpoints (ANCHORING=devnet), one per line:
                                                "evm-rpc <url>", "stacks-api <url>" (for notary-verify)
  storage:sweep [--grace-minutes M]             remove stored objects no live document references (bytes of an
                                                upload whose process died before its row), older than M minutes
                                                (default 60), and incomplete uploads older than a day; prints
                                                "scanned <n>", "removed <n>", "kept-young <n>",
                                                "incomplete-uploads <n>", then "removed <key>" per object
                                                (the first 1000)
  storage:recount [--tenant ID|SLUG]            recompute the storage quota's used-bytes counter of one tenant
                                                (its id or organization slug) or of all from the documents;
                                                prints "checked <n>", "drifted <n>", then
                                                "drifted <tenant id> <bytes before> <bytes after>" per correction
  retention:lift --document ID|SERIAL --reason R [--operator NAME]
  retention:lift --org SLUG|TENANT_ID --reason R [--operator NAME]
                                                lift the retention hold (notarial act, serventia retention) of
                                                one document or of a whole organization so that its LGPD or
                                                organization deletion works; recorded with NAME (default: the
                                                OS user), the reason and the time; prints
                                                "lifted document <id> <serial>" or "lifted tenant <id>"
  serventia:set --org SLUG|TENANT_ID (--years N | --permanent | --remove) --reason R [--operator NAME]
                                                change a declared serventia's retention (shorter included) or
                                                remove it; recorded with NAME, the reason and the time; prints
                                                "serventia <tenant id> retention <n> years|permanent" or
                                                "serventia <tenant id> removed"
  backup --to DIR                               back the service up into DIR (new or empty): the database (pg_dump
                                                while the service runs; the embedded one with the service stopped),
                                                then every stored object; prints "database <kind>",
                                                "objects <n> <bytes>", then "keep-apart <what> <where>" per secret
                                                or key the backup does not hold (keep them elsewhere)
  restore --from DIR                            restore a backup into the fresh database and object store of the
                                                configuration (the service stopped; SECRET or DATA_DIR/secret put
                                                back first); prints "database <kind>", "objects <n> <bytes>"

Lists are tab-separated, one line per row, no header.

Works whether or not the server runs, on PostgreSQL (DATABASE_URL) or the embedded database (DATA_DIR).`;

function parse(argv: string[]): OperatorCommand {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      owner: { type: 'string' },
      org: { type: 'string' },
      role: { type: 'string' },
      to: { type: 'string' },
      'grace-minutes': { type: 'string' },
      tenant: { type: 'string' },
      document: { type: 'string' },
      reason: { type: 'string' },
      operator: { type: 'string' },
      years: { type: 'string' },
      permanent: { type: 'boolean' },
      remove: { type: 'boolean' },
    },
    strict: true,
  });
  const need = (key: keyof typeof values): string => {
    const v = values[key];
    if (!v || typeof v !== 'string') throw new Error(`${command}: --${key} is required\n\n${USAGE}`);
    return v;
  };
  switch (command) {
    case 'user:create':
      return { command, email: need('email') };
    case 'org:create':
      return { command, name: need('name'), owner: need('owner') };
    case 'member:add':
      return { command, org: need('org'), email: need('email'), role: need('role') };
    case 'token':
      return { command, email: need('email'), org: values.org };
    case 'org:list':
      return { command };
    case 'org:members':
      return { command, org: need('org') };
    case 'org:transfer':
      return { command, org: need('org'), to: need('to') };
    case 'anchors:status':
      return { command };
    case 'org:deletion-status':
      return { command };
    case 'storage:sweep': {
      const grace = values['grace-minutes'];
      return { command, graceMinutes: grace === undefined ? undefined : Number(grace) };
    }
    case 'storage:recount':
      return { command, tenant: values.tenant };
    case 'retention:lift':
      return {
        command,
        document: values.document,
        org: values.org,
        reason: need('reason'),
        operator: values.operator ?? os.userInfo().username,
      };
    case 'serventia:set':
      return {
        command,
        org: need('org'),
        years: values.years === undefined ? undefined : Number(values.years),
        permanent: values.permanent,
        remove: values.remove,
        reason: need('reason'),
        operator: values.operator ?? os.userInfo().username,
      };
    default:
      throw new Error(command ? `Unknown command: ${command}\n\n${USAGE}` : USAGE);
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'devnet:info' && process.argv.length === 3) {
    // Read from the running service's data directory: no database is opened.
    process.stdout.write(await devnetInfo(loadConfig().dataDir));
    return;
  }
  const [verb, ...args] = process.argv.slice(2);
  if (verb === 'backup' || verb === 'restore') {
    const { values } = parseArgs({ args, options: { to: { type: 'string' }, from: { type: 'string' } } });
    const dir = verb === 'backup' ? values.to : values.from;
    if (!dir) throw new Error(`${verb}: --${verb === 'backup' ? 'to' : 'from'} is required\n\n${USAGE}`);
    const config = loadConfig();
    const log = serviceLogger(config, 'stderr');
    const output = verb === 'backup' ? await backup(config, dir, log) : await restore(config, dir, log);
    process.stdout.write(`${output}\n`);
    return;
  }
  const command = parse(process.argv.slice(2));
  const config = loadConfig();
  if (!config.databaseUrl) {
    // Embedded database: a running server owns it; hand it the command.
    const viaServer = await sendAdminCommand(path.join(config.dataDir, 'admin.sock'), command);
    if (viaServer !== undefined) {
      process.stdout.write(`${viaServer}\n`);
      return;
    }
  }
  // Logs go to stderr: stdout is the command's output.
  const core = await createCore(config, publicUrlFor(config, config.port), {
    log: serviceLogger(config, 'stderr'),
  });
  try {
    const output = await runOperatorCommand(
      {
        em: core.db.fork(),
        identity: core.identity.admin,
        directory: core.deps.directory,
        storage: core.deps.storage,
      },
      command,
    );
    process.stdout.write(`${output}\n`);
  } finally {
    await core.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${errorMessage(e)}\n`);
  process.exit(1);
});
