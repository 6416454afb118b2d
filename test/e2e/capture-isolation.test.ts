import dgram from 'node:dgram';
import { readdir, readFile, readlink } from 'node:fs/promises';
import type http from 'node:http';
import type { DocumentDto } from '@notary/shared';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';
import { startSite, type TestSite } from '../harness/web-site';

const CHROMIUM = '/usr/bin/chromium';
/** Values the service's environment holds during the test: none may reach a capture's processes. */
const CANARIES = {
  EVM_PRIVATE_KEY: `0x${'c0ffee'.repeat(10)}abcd`,
  STACKS_PRIVATE_KEY: `${'5eed'.repeat(16)}01`,
  SECRET: 'canary-secret-of-the-service-0123456789',
  DATABASE_URL: 'postgres://canary:canary-password@127.0.0.1:5432/canary',
  S3_SECRET_ACCESS_KEY: 'canary-s3-secret-key',
} as const;

interface ProcessFacts {
  pid: number;
  exe: string;
  /** The command line, arguments joined by spaces (Chromium's helpers rewrite theirs as one string). */
  cmdline: string;
  environ: string;
  uid: number;
  seccomp: number;
}

/** Every live process below `root` (by parent pid), with what the kernel says of it. */
async function descendants(root: number): Promise<ProcessFacts[]> {
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // Fields after the command name (which may hold spaces) in parentheses: state, ppid, ...
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (after[1]) parents.set(Number(name), Number(after[1]));
  }
  const below = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === root) return true;
    return false;
  };
  const out: ProcessFacts[] = [];
  for (const pid of parents.keys()) {
    if (!below(pid)) continue;
    const [exe, cmdline, environ, status] = await Promise.all([
      readlink(`/proc/${pid}/exe`).catch(() => ''),
      readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/environ`, 'latin1').catch(() => ''),
      readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''),
    ]);
    if (!status) continue;
    out.push({
      pid,
      exe,
      cmdline: cmdline.split('\0').filter(Boolean).join(' '),
      environ,
      uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
      seccomp: Number(/^Seccomp:\s+(\d+)/m.exec(status)?.[1]),
    });
  }
  return out;
}

/** A page that opens a WebRTC connection with a STUN server at `stun` and reports that it tried. */
function webRtcPage(stun: string): string {
  return `<!doctype html><title>rtc</title><p>rtc</p><script>
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:${stun}' }] });
    pc.createDataChannel('probe');
    pc.onicegatheringstatechange = () => {
      if (pc.iceGatheringState === 'complete') fetch('/rtc-complete');
    };
    pc.createOffer().then((o) => pc.setLocalDescription(o)).then(() => fetch('/rtc-started'));
  </script>`;
}

describe('web capture isolation: the capture process and its browser', () => {
  let t: TestService;
  let site: TestSite;
  let stun: dgram.Socket;
  let stunAddress: string;
  let token: string;
  const stunPackets: Buffer[] = [];
  const saved = new Map<string, string | undefined>();
  /** Resolves when the held page's image is requested; the capture then waits until `releaseImage`. */
  let imageRequested: () => void = () => undefined;
  let releaseImage: () => void = () => undefined;
  const imageAsked = new Promise<void>((resolve) => {
    imageRequested = resolve;
  });
  const imageReleased = new Promise<void>((resolve) => {
    releaseImage = resolve;
  });

  beforeAll(async () => {
    for (const [name, value] of Object.entries(CANARIES)) {
      saved.set(name, process.env[name]);
      process.env[name] = value;
    }
    stun = dgram.createSocket('udp4');
    stun.on('message', (m) => stunPackets.push(m));
    await new Promise<void>((resolve) => stun.bind(0, '127.0.0.2', () => resolve()));
    stunAddress = `127.0.0.2:${stun.address().port}`;
    const handler: http.RequestListener = (req, res) => {
      if (req.url === '/held') {
        res.setHeader('content-type', 'text/html');
        res.end('<!doctype html><title>held</title><p>held</p><img src="/slow.png">');
      } else if (req.url === '/slow.png') {
        imageRequested();
        void imageReleased.then(() => {
          res.setHeader('content-type', 'image/gif');
          res.end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
        });
      } else if (req.url === '/rtc') {
        res.setHeader('content-type', 'text/html');
        res.end(webRtcPage(stunAddress));
      } else {
        res.statusCode = req.url?.startsWith('/rtc-') ? 204 : 404;
        res.end();
      }
    };
    site = await startSite(handler);
    t = await startTestService('pglite', {
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
      SECRET: CANARIES.SECRET,
    });
    token = await t.token(freshEmail('isolation'));
  }, 120_000);

  afterAll(async () => {
    releaseImage();
    await t?.close();
    await site?.close();
    stun?.close();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('runs Chromium sandboxed, as another user, with none of the service environment', async () => {
    const capture = api<DocumentDto>(t.url, '/api/documents/capture', {
      method: 'POST',
      token,
      body: { url: `${site.origin}/held`, consent: true },
    });
    // The page is loaded and waits for its image: every process of the capture is alive now. (A capture that
    // answers first has failed: its answer is the error to show.)
    await Promise.race([
      imageAsked,
      capture.then((r) => {
        throw new Error(`capture answered before its page was held: ${r.status} ${JSON.stringify(r.body)}`);
      }),
    ]);
    const processes = await descendants(process.pid);
    releaseImage();
    const res = await capture;
    expect(res.status, JSON.stringify(res.body)).toBe(201);

    const browsers = processes.filter((p) => /chrom/.test(p.exe));
    const captureProcess = processes.filter((p) => /capture-process\.[jt]s/.test(p.cmdline));
    expect(captureProcess).toHaveLength(1);
    const renderers = browsers.filter((p) => p.cmdline.includes('--type=renderer'));
    expect(renderers.length).toBeGreaterThan(0);
    for (const p of [...browsers, ...captureProcess]) {
      const where = `${p.pid} ${p.cmdline.slice(0, 120)}`;
      for (const [name, value] of Object.entries(CANARIES)) {
        expect(p.environ, `${name} in ${where}`).not.toContain(value);
        // By name too (Debian's Chromium wrapper adds Google's public GOOGLE_DEFAULT_CLIENT_SECRET: not ours).
        const names = p.environ.split('\0').map((entry) => entry.split('=')[0]);
        expect(names, `${name} in ${where}`).not.toContain(name);
      }
      expect(p.cmdline.split(' '), where).not.toContain('--no-sandbox');
      if (process.getuid?.() === 0) expect(p.uid, where).not.toBe(0);
    }
    // The renderers run under Chromium's seccomp-bpf sandbox (mode 2: filter).
    for (const r of renderers) {
      expect(r.seccomp, `renderer ${r.pid}`).toBe(2);
    }
  }, 120_000);

  it('a page cannot send WebRTC (STUN) packets past the capture proxy', async () => {
    // Control: the same page in a browser without the capture's switches does reach the STUN port, so the
    // probe would see a leak.
    const control = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const received = new Promise<void>((resolve) => stun.once('message', () => resolve()));
      const page = await control.newPage();
      await page.goto(`${site.origin}/rtc`);
      await Promise.race([
        received,
        new Promise((_, reject) => setTimeout(() => reject(new Error('control: no STUN packet')), 20_000)),
      ]);
    } finally {
      await control.close();
    }
    stunPackets.length = 0;
    const requestsBefore = site.requests.length;

    const res = await api<DocumentDto>(t.url, '/api/documents/capture', {
      method: 'POST',
      token,
      body: { url: `${site.origin}/rtc`, consent: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // The page did try (its offer was set, which starts gathering), and nothing reached the STUN port.
    expect(site.requests.slice(requestsBefore)).toContain('/rtc-started');
    expect(stunPackets).toHaveLength(0);
  }, 120_000);
});
