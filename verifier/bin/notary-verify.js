#!/usr/bin/env node
// notary-verify: Node >= 22.18 runs the TypeScript sources directly (type stripping); see verifier/src/cli.ts.
// `extend` also writes PDFs with @notary/pdf, whose sources need a full TypeScript loader: tsx, registered
// for that subcommand only.
if (process.argv[2] === 'extend') (await import('tsx/esm/api')).register();
const { runCli } = await import('../src/cli.ts');

const result = await runCli(process.argv.slice(2));
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.code;
