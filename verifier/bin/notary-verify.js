#!/usr/bin/env node
// notary-verify: Node >= 22.18 runs the TypeScript sources directly (type stripping); see verifier/src/cli.ts.
import { runCli } from '../src/cli.ts';

const result = await runCli(process.argv.slice(2));
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.code;
