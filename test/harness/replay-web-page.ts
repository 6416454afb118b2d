/**
 * ReplayWeb.page, Webrecorder's standard player, for the replay tests: its built `ui.js` and `sw.js` (fetched
 * from its npm package by `.ci/fetch-replaywebpage.sh` into `.tmp/replaywebpage/`, version and SHA-512 pinned
 * there) served on 127.0.0.1 with the archives to play, byte ranges answered (the player reads a WACZ by range:
 * its index, then each record at its offset). The page embeds the player as its embedding guide shows
 * (`<replay-web-page source url replayBase embed="replayonly">`); the archived page is an iframe inside it.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Frame, Page } from 'playwright-core';

/** Where `.ci/fetch-replaywebpage.sh` leaves the player. */
export const REPLAY_WEB_PAGE_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../.tmp/replaywebpage',
);

/** Whether the player's files are there (else the test says how to fetch them). */
export function replayWebPageAvailable(): boolean {
  return ['ui.js', 'sw.js'].every((f) => existsSync(path.join(REPLAY_WEB_PAGE_DIR, f)));
}

export interface ReplayServer {
  origin: string;
  /** The embedding page's URL for `archive` (a name given to `startReplayServer`) opened at `url`. */
  pageUrl(archive: string, url: string): string;
  close(): Promise<void>;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const attr = (s: string) => s.replace(/[&<>"]/g, (c) => HTML_ESCAPES[c] ?? c);

/**
 * Serves the player and `archives` (name to WACZ bytes, at `/archives/<name>.wacz`) on 127.0.0.1 and a free
 * port: `/` embeds the player for `?archive=&url=`, `/ui.js`, `/replay/sw.js` (the service worker's scope is
 * `/replay/`), `Range: bytes=a-b` answered with 206.
 */
export async function startReplayServer(archives: Record<string, Uint8Array>): Promise<ReplayServer> {
  const ui = await readFile(path.join(REPLAY_WEB_PAGE_DIR, 'ui.js'));
  const sw = await readFile(path.join(REPLAY_WEB_PAGE_DIR, 'sw.js'));
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const send = (body: Uint8Array, type: string) => {
      res.setHeader('content-type', type);
      res.setHeader('accept-ranges', 'bytes');
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      if (range) {
        const start = Number(range[1]);
        const end = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
        if (start > end) {
          res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
          return;
        }
        res.writeHead(206, {
          'content-range': `bytes ${start}-${end}/${body.length}`,
          'content-length': end - start + 1,
        });
        res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
        return;
      }
      res.setHeader('content-length', body.length);
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (u.pathname === '/') {
      const archive = u.searchParams.get('archive') ?? '';
      const url = u.searchParams.get('url') ?? '';
      send(
        Buffer.from(
          `<!doctype html><html><head><meta charset="utf-8"><title>replay</title><script src="/ui.js"></script></head>
          <body><replay-web-page source="/archives/${attr(encodeURIComponent(archive))}.wacz" url="${attr(url)}"
          replayBase="/replay/" embed="replayonly" style="width:100%;height:900px;display:block"></replay-web-page></body></html>`,
        ),
        'text/html; charset=utf-8',
      );
      return;
    }
    if (u.pathname === '/ui.js') return send(ui, 'text/javascript');
    if (u.pathname === '/replay/sw.js') return send(sw, 'text/javascript');
    const m = /^\/archives\/([^/]+)\.wacz$/.exec(u.pathname);
    const wacz = m?.[1] ? archives[decodeURIComponent(m[1])] : undefined;
    if (wacz) return send(wacz, 'application/wacz');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    pageUrl: (archive, url) =>
      `${origin}/?archive=${encodeURIComponent(archive)}&url=${encodeURIComponent(url)}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Opens `url` of `archive` in the player and resolves with the frame the archived page is replayed in (the
 * player's `mp_` frame for that URL), once its document has loaded. On a loaded machine the player now and then
 * never navigates its frame on a first load (its service worker still starting); a second load of the same
 * page then replays it, so the player gets two loads of `timeoutMs` each.
 * @throws Error naming the frames seen when neither load shows such a frame.
 */
export async function openInReplay(
  page: Page,
  server: ReplayServer,
  archive: string,
  url: string,
  timeoutMs = 60_000,
): Promise<Frame> {
  const seen: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const found = new Promise<Frame | null>((resolve) => {
      const check = (f: Frame) => {
        seen.push(f.url());
        if (!f.url().includes(`mp_/${url}`)) return;
        page.off('framenavigated', check);
        clearTimeout(timer);
        resolve(f);
      };
      const timer = setTimeout(() => {
        page.off('framenavigated', check);
        resolve(null);
      }, timeoutMs);
      page.on('framenavigated', check);
    });
    await page.goto(server.pageUrl(archive, url));
    const frame = await found;
    if (frame) {
      await frame.waitForLoadState('load', { timeout: timeoutMs });
      return frame;
    }
    if (attempt === 2) {
      throw new Error(
        `ReplayWeb.page showed no frame for ${url} in two loads of ${timeoutMs} ms (frames seen: ${[...new Set(seen)].join(', ') || 'none'})`,
      );
    }
  }
}
