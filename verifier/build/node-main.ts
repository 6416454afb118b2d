/**
 * Entry of `notary-verify.mjs`, the command line as one file (see `build.ts`): every part of the verifier,
 * `extend` included, is plain JavaScript in the bundle, so nothing is loaded at run time.
 */
import { runCli } from '../src/cli.ts';

const result = await runCli(process.argv.slice(2));
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.code;
