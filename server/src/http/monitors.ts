import type { RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { certidaoOf } from '../domain/monitors/certidao';
import { route } from './route';

/**
 * `GET /api/monitors/{id}/certidao`: the monitoring's certidão de permanência (PDF/A-3b, Portuguese, the run
 * chain attached as `monitor-chain.json`), an ordinary notarized document of the tenant: the one issued after
 * the last run, else one issued now (editor and above). Its serial is in `X-Serial-Number`.
 * Statuses: 200; 401; 403 a reader when a new one must be issued; 404 no such monitoring in the workspace;
 * 413 over the storage quota.
 */
export function certidaoRoute(deps: AppDeps): RequestHandler {
  return route(deps, async ({ req, res, em, actor }) => {
    const { bytes, doc } = await certidaoOf(em, { ...deps, log: req.log }, actor, String(req.params.id));
    res.setHeader('Content-Type', 'application/pdf');
    // Express writes RFC 6266's `attachment; filename=...; filename*=UTF-8''...` (npm content-disposition).
    res.attachment(doc.fileName);
    res.setHeader('X-Serial-Number', doc.serialNumber);
    res.setHeader('X-Pdfa', 'PDF/A-3b');
    res.end(bytes);
  });
}
