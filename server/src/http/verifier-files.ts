import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repositoryFile } from '@notary/shared/module-entry';
import express, { type Response, type Router } from 'express';

/**
 * Where `npm run build -w @notary/verify` (run by `npm install`/`npm ci`) puts the verifier that works without
 * this service: `verify.html`, `notary-verify.mjs` and their `SHA256SUMS`.
 */
export const VERIFIER_DIST_DIR = fileURLToPath(repositoryFile('verifier/dist/'));

/** The files served, by name: media type, and whether a browser should save rather than show it. */
const FILES: Readonly<Record<string, { type: string; download: boolean }>> = {
  'verify.html': { type: 'text/html; charset=utf-8', download: true },
  'notary-verify.mjs': { type: 'text/javascript; charset=utf-8', download: true },
  SHA256SUMS: { type: 'text/plain; charset=utf-8', download: false },
};

/** How many bytes of the page are read for its Content-Security-Policy `<meta>` (it is in the `<head>`). */
const HEAD_BYTES = 4096;

/**
 * The verifier that travels without the service (docs/verify.md, "Verify without us"), served as built:
 * - `/verify/`: the verify page (`verify.html`), with the Content-Security-Policy its `<meta>` states as a
 *   header too (plus `frame-ancestors 'none'`, which only a header can carry): no script but its own inline
 *   one, no request but to the chain endpoints the user types;
 * - `/verify/notary-verify.mjs`, `/verify/verify.html`: the two files to download and keep (attachments);
 * - `/verify/SHA256SUMS`: their SHA-256, as docs/verify.md lists them for each release.
 * Never cached without revalidation (a rebuild changes them). Without a build, each answers 404 with how to
 * build; the server starts either way.
 */
export function verifierRouter(dir: string = VERIFIER_DIST_DIR): Router {
  const router = express.Router();
  let policy: { key: string; csp: string } | null = null;
  /** The page's own policy, read again when the file changes. */
  const pagePolicy = async (file: string): Promise<string | null> => {
    const info = await stat(file);
    const key = `${info.mtimeMs}:${info.size}`;
    if (policy?.key === key) return policy.csp;
    const handle = await open(file, 'r');
    try {
      const head = Buffer.alloc(HEAD_BYTES);
      const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
      const m = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(
        head.subarray(0, bytesRead).toString('utf8'),
      );
      if (!m?.[1]) return null;
      policy = { key, csp: `${m[1]}; frame-ancestors 'none'` };
      return policy.csp;
    } finally {
      await handle.close();
    }
  };

  router.get('/', async (req, res, next) => {
    // `/verify` -> `/verify/`, as the web client's `/app/`.
    if (!req.originalUrl.split('?')[0]?.endsWith('/')) {
      res.redirect(301, `${req.baseUrl}/`);
      return;
    }
    try {
      const file = path.join(dir, 'verify.html');
      const csp = await pagePolicy(file).catch(() => undefined);
      if (csp === undefined) {
        notBuilt(res);
        return;
      }
      // A page without its policy is not the build's: refuse to serve it rather than serve it unconfined.
      if (csp === null) {
        res
          .status(500)
          .type('text/plain; charset=utf-8')
          .send('verify.html carries no Content-Security-Policy\n');
        return;
      }
      res.setHeader('Content-Security-Policy', csp);
      res.setHeader('X-Frame-Options', 'DENY');
      res.setHeader('Cache-Control', 'no-cache');
      res.type('text/html; charset=utf-8');
      res.sendFile(file, { dotfiles: 'deny', lastModified: true, cacheControl: false }, (e) => {
        if (e && !res.headersSent) next(e);
      });
    } catch (e) {
      next(e);
    }
  });

  router.get('/:name', (req, res, next) => {
    const name = req.params.name;
    const served = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
    if (!served) {
      res.status(404).type('text/plain; charset=utf-8').send('Not found\n');
      return;
    }
    const file = path.join(dir, name);
    stat(file).then(
      () => {
        res.setHeader('Cache-Control', 'no-cache');
        // Nothing in these answers runs here: a script or page opened as a document would get no rights.
        res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
        if (served.download) res.attachment(name);
        res.type(served.type);
        res.sendFile(file, { dotfiles: 'deny', lastModified: true, cacheControl: false }, (e) => {
          if (e && !res.headersSent) next(e);
        });
      },
      () => notBuilt(res),
    );
  });
  return router;
}

function notBuilt(res: Response): void {
  res
    .status(404)
    .type('text/plain; charset=utf-8')
    .send(
      'The verifier is not built. Run `npm run build -w @notary/verify` (or `npm install`), then reload.\n',
    );
}
