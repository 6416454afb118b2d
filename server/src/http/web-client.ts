import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repositoryFile } from '@notary/shared/module-entry';
import express, { type Router } from 'express';

/** Where `npm run build -w @notary/desktop` (run by `npm install`) puts the web build of the desktop client. */
export const WEB_CLIENT_DIR = fileURLToPath(repositoryFile('desktop/dist/web/'));

/**
 * CSP of the web client: scripts and styles from this origin only, nothing inline, no framing. (React's `style` props
 * set CSSOM properties, which `style-src 'self'` allows.) Requests go to this origin, and to chain endpoints over https
 * or on loopback: the verify page asks EVM JSON-RPC and Stacks API endpoints the user may enter (a proof is checked
 * against chains of the user's choosing, not ours), so no fixed list can be known here. Scripts stay this origin's
 * only, so nothing but our own code can use the wider `connect-src`.
 */
export const WEB_CLIENT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self' https: http://127.0.0.1:* http://localhost:*",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The desktop client's web build at `/app/` (docs/desktop.md, Desktop client): static files with the strict CSP,
 * hashed assets cached for a year, `index.html` never cached, and `index.html` for any other extension-less
 * path (the UI routes with `#/...`, so this only catches hand-typed URLs). Mounted before the CORS policy:
 * the page and its scripts load from any address the server answers at, and the API tells the user when
 * that address is not an allowed origin. Without a build, `/app/` answers 404 with how to build it; the
 * server itself starts either way.
 */
export function webClientRouter(dir: string = WEB_CLIENT_DIR): Router {
  const router = express.Router();
  const index = path.join(dir, 'index.html');
  router.use((req, res, next) => {
    // `/app` -> `/app/`: the build's asset paths are relative to the directory.
    if (req.path === '/' && !req.originalUrl.split('?')[0]?.endsWith('/')) {
      const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
      res.redirect(301, `${req.baseUrl}/${query}`);
      return;
    }
    res.setHeader('Content-Security-Policy', WEB_CLIENT_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    next();
  });
  router.use(
    express.static(dir, {
      index: 'index.html',
      redirect: false,
      setHeaders: (res, file) => {
        const asset = file.includes(`${path.sep}assets${path.sep}`);
        res.setHeader('Cache-Control', asset ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  router.get('/{*rest}', (req, res) => {
    if (!existsSync(index)) {
      res
        .status(404)
        .type('text/plain; charset=utf-8')
        .send('The web client is not built. Run `npm run build` (or `npm install`), then reload.\n');
      return;
    }
    if (path.extname(req.path)) {
      res.status(404).type('text/plain; charset=utf-8').send('Not found\n');
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return router;
}
