#!/usr/bin/env node
// notary-verify. Installed from the package (`npm install`, `npx notary-verify`): the one-file build,
// dist/notary-verify.mjs, which runs on Node >= 20 with nothing else. In the repository, where the TypeScript
// sources sit beside this file: the sources themselves (Node >= 22.18 strips their types; no build step),
// and for `extend`, whose PDF writer's sources need a full TypeScript loader, tsx.
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../src/cli.ts', import.meta.url))) {
  await import('../dist/notary-verify.mjs');
} else {
  if (process.argv[2] === 'extend') (await import('tsx/esm/api')).register();
  const { runCli } = await import('../src/cli.ts');
  const result = await runCli(process.argv.slice(2));
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.code;
}
