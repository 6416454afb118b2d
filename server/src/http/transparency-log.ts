import { AppError } from '@notary/shared';
import { parseTilePath } from '@notary/trust/tlog';
import express, { type Router } from 'express';
import type { AppDeps } from '../deps';
import { latestAnchoredCheckpoint } from '../domain/anchoring/anchored-checkpoint';
import { rateLimited } from './rate-limit';
import { publicRoute } from './route';

/** How long a checkpoint may be cached (C2SP tlog-tiles: mutable, "no longer than a few seconds"). */
const CHECKPOINT_MAX_AGE_SECONDS = 5;

/**
 * The transparency log's static API (C2SP tlog-tiles), mounted at `/log`: `GET /log/checkpoint` (the signed
 * checkpoint with the witnesses' cosignatures collected so far, text, cached 5 s), `GET /log/anchored` (the newest
 * checkpoint anchored on the chains with its place in its batch, JSON, cached 5 s), `GET /log/tile/<L>/<N>[.p/<W>]` (Merkle tree tiles) and
 * `GET /log/tile/entries/<N>[.p/<W>]` (entry bundles), binary and immutable (cached a year by any CDN). Readable
 * from any origin: monitors and verify pages elsewhere follow the log. A resource the log does not hold yet is 404.
 */
export function transparencyLogRouter(deps: AppDeps): Router {
  const router = express.Router();
  router.use(rateLimited(deps, ['global']), (_req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    next();
  });
  router.get(
    '/checkpoint',
    publicRoute(async ({ res }) => {
      const checkpoint = await deps.transparencyLog.checkpoint();
      if (!checkpoint) throw new AppError('NOT_FOUND', 'The log has no checkpoint yet');
      res.setHeader('Cache-Control', `public, max-age=${CHECKPOINT_MAX_AGE_SECONDS}`);
      const note = deps.logWitnessing ? await deps.logWitnessing.cosigned(checkpoint) : checkpoint.note;
      res.type('text/plain; charset=utf-8').send(note);
    }),
  );
  router.get(
    '/anchored',
    publicRoute(async ({ res }) => {
      const anchored = await latestAnchoredCheckpoint(deps.db.fork(), deps.logWitnessing);
      if (!anchored) throw new AppError('NOT_FOUND', 'The log has no checkpoint anchored on the chains yet');
      res.setHeader('Cache-Control', `public, max-age=${CHECKPOINT_MAX_AGE_SECONDS}`);
      res.json(anchored);
    }),
  );
  router.get(
    '/tile/{*rest}',
    publicRoute(async ({ req, res }) => {
      const name = parseTilePath(req.path.replace(/^\//, ''));
      const bytes = name ? await deps.transparencyLog.tile(name) : undefined;
      if (!bytes) {
        res.setHeader('Cache-Control', 'no-store');
        throw new AppError('NOT_FOUND', 'No such tile in this log');
      }
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.type('application/octet-stream').send(Buffer.from(bytes));
    }),
  );
  return router;
}
