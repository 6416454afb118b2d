import type { Request, Response } from 'express';

/**
 * The route a request matched, as a template (`/api/documents/:id/certificate`), for metrics: never the path
 * itself, whose ids, serials and hashes would make a series per document. A router mounted at a prefix without a
 * route of its own (the web client, tRPC) is `<prefix>/*`; the public verify lane names itself
 * (`res.locals.routeTemplate`); anything else, 404s of scanners included, is `unmatched`.
 */
export function routeTemplate(req: Request, res: Response): string {
  const named = res.locals.routeTemplate;
  if (typeof named === 'string') return named;
  const route: unknown = req.route;
  if (route && typeof route === 'object' && 'path' in route && typeof route.path === 'string') {
    return `${req.baseUrl}${route.path}`;
  }
  return req.baseUrl ? `${req.baseUrl}/*` : 'unmatched';
}
