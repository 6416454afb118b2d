import { AppError } from '@notary/shared';
import express, { type Router } from 'express';
import type { AppDeps } from '../deps';
import { rateLimited } from './rate-limit';
import { publicRoute } from './route';

/** Bytes of an `add-checkpoint` body at most: 63 proof lines, a checkpoint and a few signatures fit well below. */
const MAX_BODY = '16kb';

/**
 * The witness API (C2SP tlog-witness), mounted at `/witness` when the service witnesses other logs
 * (`WITNESS_LOGS`): `POST /witness/add-checkpoint` answers with the statuses and bodies the protocol fixes (200
 * cosignature lines, 409 `text/x.tlog.size`, 400/403/404/422 with a reason in plain text), not the service's JSON
 * errors, since logs of any implementation read them; `GET /witness/<origin hash>/checkpoint` serves the latest
 * checkpoint cosigned for a log (Monitor Retrieval). No authentication: the log's signature is the check.
 */
export function witnessRouter(deps: AppDeps): Router {
  const router = express.Router();
  router.use(rateLimited(deps, ['global']));
  router.post(
    '/add-checkpoint',
    express.text({ type: () => true, limit: MAX_BODY }),
    publicRoute(async ({ req, res }) => {
      const witness = deps.witness;
      if (!witness) throw new AppError('NOT_FOUND', 'This service witnesses no log');
      const body = typeof req.body === 'string' ? req.body : '';
      const answer = await witness.addCheckpoint(body);
      res.setHeader('Cache-Control', 'no-store');
      if (answer.status === 200) {
        res.status(200).type('text/plain; charset=utf-8').send(answer.cosignature);
      } else if (answer.status === 409) {
        // `end`, not `send`: the protocol's media type takes no charset parameter.
        res.status(409).setHeader('Content-Type', 'text/x.tlog.size');
        res.end(`${answer.size}\n`);
      } else {
        deps.log
          .child({ module: 'witness' })
          .warn({ status: answer.status, reason: answer.reason }, 'checkpoint refused');
        res.status(answer.status).type('text/plain; charset=utf-8').send(`${answer.reason}\n`);
      }
    }),
  );
  router.get(
    '/:hash/checkpoint',
    publicRoute(async ({ req, res }) => {
      const hash = String(req.params.hash);
      const note = /^[0-9a-f]{64}$/.test(hash) ? await deps.witness?.latest(hash) : undefined;
      if (!note) throw new AppError('NOT_FOUND', 'No checkpoint cosigned for this log');
      res.setHeader('Cache-Control', 'public, max-age=5');
      res.type('text/plain; charset=utf-8').send(note);
    }),
  );
  return router;
}
