/**
 * A client of the service as Node's own fetch (undici, its default pool) is: requests separated by idle gaps,
 * which the pool sends on the connection it kept alive. Plain JavaScript, so that the same file runs under
 * every Node the tests name (the project's Node 24 and an older system Node 20).
 *
 * `node pooled-client.mjs gaps <base URL> <gap seconds,...>`: a GET, then one GET after each gap.
 * `node pooled-client.mjs early <base URL> <MiB>`: a GET, an upload of that size with an invalid token
 * (answered 401 before its body is read), then a GET.
 *
 * Prints one JSON line: `{ node, connections, results: [{ gap, path, status, connection } | { gap, path,
 * error }] }`; `connections` counts the TCP connections the pool opened (undici's diagnostics channel).
 */
import diagnostics from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';

const [mode, base, arg] = process.argv.slice(2);
let connections = 0;
diagnostics.subscribe('undici:client:connected', () => {
  connections += 1;
});

const results = [];
async function request(gap, path, init) {
  try {
    const res = await fetch(`${base}${path}`, init);
    await res.arrayBuffer();
    results.push({ gap, path, status: res.status, connection: res.headers.get('connection') });
  } catch (e) {
    results.push({ gap, path, error: `${e}${e.cause ? ` (${e.cause.code ?? e.cause})` : ''}` });
  }
}

// The busiest public route and the liveness probe, in turn: both real answers of the service.
const paths = ['/health', `/api/public/verify?hash=${'ab'.repeat(32)}`];
if (mode === 'gaps') {
  await request(0, paths[0]);
  for (const [i, gap] of arg.split(',').map(Number).entries()) {
    await sleep(gap * 1000);
    await request(gap, paths[(i + 1) % paths.length]);
  }
} else if (mode === 'early') {
  await request(0, '/health');
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([new Uint8Array(Number(arg) * 1024 * 1024)]), 'early.bin');
  await request(0, '/api/documents/upload', {
    method: 'POST',
    headers: { authorization: 'Bearer not-a-token' },
    body: form,
  });
  await request(0, '/health');
} else {
  throw new Error(`unknown mode ${mode}`);
}
console.log(JSON.stringify({ node: process.version, connections, results }));
