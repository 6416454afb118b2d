import type http from 'node:http';
import { PROVENANCE_PAGE_URL } from '@notary/server/adapters/capture/service/provenance-summary';
import type { DocumentDto } from '@notary/shared';
import { unzipSync, zipSync } from 'fflate';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import {
  openInReplay,
  REPLAY_WEB_PAGE_DIR,
  type ReplayServer,
  replayWebPageAvailable,
  startReplayServer,
} from '../harness/replay-web-page';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';
import { replayProblems } from '../harness/wacz-replay';
import { createTestCa, solidPng, startSite, type TestCa, type TestSite } from '../harness/web-site';

const CHROMIUM = '/usr/bin/chromium';
const available = replayWebPageAvailable();
if (!available) {
  console.warn(
    `[replay] skipped: ReplayWeb.page is not in ${REPLAY_WEB_PAGE_DIR}; fetch it with: sh .ci/fetch-replaywebpage.sh (.ci/run does)`,
  );
}

/** One capture of the suite: what to capture, and what its replay must show. */
interface Case {
  name: string;
  url: () => string;
  /** Texts the replayed page shows (script-made ones included). */
  texts: string[];
  /** Ids of images the replayed page must have loaded from the archive. */
  images: string[];
  /** Scrolls the replayed page to its end first (content that loads only once scrolled to). */
  scroll?: boolean;
}

interface Captured {
  wacz: Uint8Array;
  finalUrl: string;
  requestedUrl: string;
}

const image = (rgb: [number, number, number]): http.RequestListener => {
  const body = solidPng(40, 40, rgb);
  return (_req, res) => {
    res.setHeader('content-type', 'image/png');
    res.end(body);
  };
};

function html(res: http.ServerResponse, title: string, body: string) {
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(`<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`);
}

/** A site serving an image of colour `rgb` at `imagePath` and the page `title` with `body` at every other path. */
function pageWithImage(
  imagePath: string,
  rgb: [number, number, number],
  title: string,
  body: string,
): http.RequestListener {
  return (req, res) => {
    if (req.url === imagePath) return image(rgb)(req, res);
    html(res, title, body);
  };
}

/**
 * Captures of loopback sites (plain HTTP; HTTPS under a test CA with several origins; a page that loads content
 * once scrolled to; a hostile page) opened in ReplayWeb.page, Webrecorder's player, in Chromium with every site
 * gone: the page's text, script-made content included, its images, and the provenance summary all come from
 * the archive. Before that, each archive passes the index check (`replayProblems`): a broken one fails here.
 */
describe.skipIf(!available)('web captures replay in ReplayWeb.page with the sites offline', () => {
  let t: TestService;
  let ca: TestCa;
  let plain: TestSite;
  let secure: TestSite;
  let cdn: TestSite;
  let assets: TestSite;
  let hostile: TestSite;
  let token: string;
  let replay: ReplayServer | undefined;
  let browser: Browser | undefined;
  const sites: TestSite[] = [];
  const captured = new Map<string, Captured>();

  const cases: Case[] = [
    {
      name: 'plain',
      url: () => `${plain.origin}/page`,
      texts: ['Plain HTTP page', 'Written by a script over plain HTTP'],
      images: ['red'],
    },
    {
      name: 'origins',
      url: () => `${secure.origin}/page`,
      texts: ['Several origins', 'Written by a script of another origin'],
      images: ['green', 'blue'],
    },
    {
      name: 'lazy',
      url: () => `${secure.origin}/lazy`,
      texts: ['Lazy page', 'Lazy text arrived'],
      images: ['lazy'],
      scroll: true,
    },
    {
      name: 'hostile',
      url: () => `${hostile.origin}/hostile`,
      texts: ['Hostile page text'],
      images: ['allowed'],
    },
  ];

  beforeAll(async () => {
    ca = await createTestCa();
    const tls = { certPem: ca.chainPem, keyPem: ca.keyPem };
    plain = await startSite(
      pageWithImage(
        '/red.png',
        [200, 0, 0],
        'Plain',
        `<h1>Plain HTTP page</h1><img id="red" src="/red.png" width="40" height="40">
         <script>document.body.insertAdjacentHTML('beforeend', '<p>Written by a script over plain HTTP</p>')</script>`,
      ),
    );
    cdn = await startSite((req, res) => {
      if (req.url === '/app.js') {
        res.setHeader('content-type', 'text/javascript');
        res.end(
          `document.body.insertAdjacentHTML('beforeend', '<p id="made">Written by a script of another origin</p>');`,
        );
        return;
      }
      if (req.url === '/lazy-text') {
        res.setHeader('content-type', 'text/plain');
        res.setHeader('access-control-allow-origin', '*');
        res.end('Lazy text arrived');
        return;
      }
      if (req.url === '/lazy.png') return image([0, 0, 200])(req, res);
      image([0, 150, 0])(req, res);
    }, tls);
    assets = await startSite(image([0, 0, 255]), tls);
    secure = await startSite((req, res) => {
      if (req.url === '/lazy') {
        html(
          res,
          'Lazy',
          `<h1>Lazy page</h1><div style="height: 3000px">tall</div><div id="slot">waiting</div>
           <script>
             new IntersectionObserver((entries, observer) => {
               if (!entries.some((e) => e.isIntersecting)) return;
               observer.disconnect();
               fetch('${cdn.origin}/lazy-text').then((r) => r.text()).then((text) => {
                 const slot = document.getElementById('slot');
                 slot.textContent = text;
                 const img = new Image(40, 40);
                 img.id = 'lazy';
                 img.src = '${cdn.origin}/lazy.png';
                 slot.after(img);
               });
             }).observe(document.getElementById('slot'));
           </script>`,
        );
        return;
      }
      html(
        res,
        'Origins',
        `<h1>Several origins</h1><img id="green" src="${cdn.origin}/green.png" width="40" height="40">
         <img id="blue" src="${assets.origin}/blue.png" width="40" height="40">
         <script src="${cdn.origin}/app.js"></script>`,
      );
    }, tls);
    hostile = await startSite(
      pageWithImage(
        '/allowed.png',
        [100, 100, 0],
        'Hostile',
        `<p>Hostile page text</p><img id="allowed" src="/allowed.png" width="40" height="40">
         <img src="http://10.0.0.1/x.png"><img src="http://169.254.169.254/latest/meta-data/">
         <a href="file:///etc/passwd">local</a><img src="file:///etc/hostname">
         <script>try { new WebSocket('ws://169.254.169.254/socket'); } catch (e) {}</script>`,
      ),
    );
    sites.push(plain, cdn, assets, secure, hostile);
    t = await startTestService('pglite', {
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: '127.0.0.1',
      CAPTURE_CA_CERTS: ca.caPath,
      RATE_LIMITS: 'off',
    });
    token = await t.token(freshEmail('replay'));
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await replay?.close();
    await t?.close();
    await Promise.all(sites.map((s) => s.close()));
    await ca?.close();
  });

  it('captures each site; each archive indexes a record for every URL the sites served', async () => {
    for (const c of cases) {
      const before = sites.map((s) => s.requests.length);
      const res = await api<DocumentDto & { message: string }>(t.url, '/api/documents/capture', {
        method: 'POST',
        token,
        body: { url: c.url(), consent: true },
      });
      expect(res.status, `${c.name}: ${JSON.stringify(res.body)}`).toBe(201);
      const dl = await api<{ downloadUrl: string }>(t.url, `/api/documents/${res.body.id}/download`, {
        token,
      });
      const wacz = new Uint8Array(await (await fetch(dl.body.downloadUrl)).arrayBuffer());
      const served = sites.flatMap((s, i) =>
        s.requests
          .slice(before[i])
          .filter((p) => p !== '/favicon.ico')
          .map((p) => `${s.origin}${p}`),
      );
      expect(served.length, c.name).toBeGreaterThan(0);
      expect(await replayProblems(wacz, served), c.name).toEqual([]);
      const pages = Buffer.from(unzipSync(wacz)['pages/pages.jsonl'] ?? [])
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { url?: string });
      captured.set(c.name, { wacz, finalUrl: pages[1]?.url ?? '', requestedUrl: c.url() });
    }
  }, 240_000);

  it('a broken archive fails the check: a wrong index offset, a loaded resource without its record', async () => {
    const good = captured.get('origins');
    expect(good).toBeDefined();
    const files = unzipSync(good?.wacz ?? new Uint8Array());
    const index = Object.keys(files).find((k) => k.startsWith('indexes/')) ?? '';
    const lines = Buffer.from(files[index] ?? [])
      .toString()
      .trimEnd()
      .split('\n');
    const repack = (cdx: string[]) =>
      zipSync({ ...files, [index]: [Buffer.from(`${cdx.join('\n')}\n`), { level: 0 }] }, { level: 0 });

    const green = lines.findIndex((l) => l.includes('/green.png"'));
    expect(green).toBeGreaterThanOrEqual(0);
    const shifted = lines.map((l, i) =>
      i === green ? l.replace(/"offset":"(\d+)"/, (_m, o: string) => `"offset":"${Number(o) + 1}"`) : l,
    );
    const wrongOffset = await replayProblems(repack(shifted));
    expect(wrongOffset.join('\n')).toMatch(
      /green\.png.*not one whole gzip member|green\.png.*no WARC record/,
    );

    const dropped = lines.filter((_l, i) => i !== green);
    const greenUrl = `${cdn.origin}/green.png`;
    const missing = await replayProblems(repack(dropped), [greenUrl]);
    expect(missing).toContain(`loaded resource ${greenUrl} has no record`);
    expect(missing.join('\n')).toMatch(/response record of .*green\.png.* is not indexed/);
  });

  it('each archive replays in ReplayWeb.page with every site offline: text, script-made content, images, provenance', async () => {
    expect(captured.size).toBe(cases.length);
    // Offline: nothing the replay needs may come from the sites.
    await Promise.all(sites.map((s) => s.close()));
    for (const s of sites) await expect(fetch(`${s.origin}/`)).rejects.toThrow();
    replay = await startReplayServer(Object.fromEntries([...captured].map(([name, c]) => [name, c.wacz])));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--disable-gpu'] });
    // Tall enough to show the whole player: a replayed page's intersection observers see the top viewport.
    const context = await browser.newContext({ viewport: { width: 1280, height: 1200 } });
    const page = await context.newPage();
    for (const c of cases) {
      const archive = captured.get(c.name);
      expect(archive?.finalUrl, c.name).toBe(c.url());
      const frame = await openInReplay(page, replay, c.name, archive?.finalUrl ?? '');
      if (c.scroll) await frame.evaluate('window.scrollTo(0, document.body.scrollHeight)');
      for (const text of c.texts) {
        await frame.getByText(text, { exact: true }).first().waitFor({ timeout: 30_000 });
      }
      for (const id of c.images) {
        const img = frame.locator(`img#${id}`);
        await img.waitFor({ timeout: 30_000 });
        await expect
          .poll(() => img.evaluate((el) => (el as { naturalWidth: number }).naturalWidth), {
            timeout: 30_000,
          })
          .toBe(40);
      }
      // The provenance summary is a page of the same archive.
      const summary = await openInReplay(page, replay, c.name, PROVENANCE_PAGE_URL);
      await summary.getByRole('heading', { name: 'Provenance summary' }).waitFor({ timeout: 30_000 });
      expect(await summary.locator('body').innerText(), c.name).toContain(archive?.requestedUrl ?? '');
    }
    await context.close();
  }, 420_000);
});
