/**
 * Baseline for `npm run bench` (see `run.ts`): a bare Express 5 app, run as its own process, answering
 * `GET /api/public/verify` with `res.json()` of the object in `BARE_BODY` (the service's own verify answer, so
 * the body has the same size). No middleware, no database: what the service's verify route costs on top of
 * Express itself is the difference. Listens on `HOST`:`PORT` and prints `[bare] listening on <url>`.
 */
import express from 'express';

const body: unknown = JSON.parse(process.env.BARE_BODY ?? '{}');
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? '0');

const app = express();
app.get('/api/public/verify', (_req, res) => {
  res.json(body);
});

const server = app.listen(port, host, (error?: Error) => {
  if (error) {
    console.error(`[bare] failed to listen: ${error.message}`);
    process.exit(1);
  }
  console.log(`[bare] listening on http://${host}:${port}`);
});

process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
