import { createHash, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import type { OriginTls } from '../process-protocol';

/**
 * Provenance of a capture from its own connections: the TLS of every origin the page reached, as Chromium
 * reported it over the DevTools protocol (https://chromedevtools.github.io/devtools-protocol/tot/Network/:
 * `Network.responseReceived` security details, `Network.getCertificate`). The page that sums it up is
 * `provenance-summary.ts`.
 */

/**
 * Bounds of the TLS record: origins whose connection is kept (the rest are counted), certificates per chain,
 * bytes per certificate (DER), bytes of all chains together (past them an origin keeps its leaf only, then
 * nothing), timestamps per origin, targets (frames of other processes, workers) listened to, how deep such
 * targets nest, and how long one DevTools call to a target may take (ms).
 */
export const TLS_LIMITS = {
  origins: 200,
  chainCerts: 10,
  certBytes: 16 * 1024,
  chainBytes: 4 * 1024 * 1024,
  scts: 16,
  targets: 32,
  depth: 3,
  callMs: 5_000,
} as const;
export type TlsLimits = { [K in keyof typeof TLS_LIMITS]: number };

/** A signed certificate timestamp as Chromium reports it (`Network.SignedCertificateTimestamp`). */
export interface CertificateTimestamp {
  status: string;
  origin: string;
  logDescription: string;
  logId: string;
  /** Milliseconds since the epoch, as the log stated it. */
  timestamp: number;
  hashAlgorithm: string;
  signatureAlgorithm: string;
  signatureData: string;
}

/** One origin's TLS as `capture/tls.json` holds it: the summary of `capture.json`, and the material itself. */
export interface OriginTlsDetail extends OriginTls {
  /** The certificates Chromium gave for the origin (PEM), leaf first: the path it verified up to its anchor. */
  chain: string[];
  /** The leaf's subject alternative names as Chromium listed them. */
  sanList: string[];
  signedCertificateTimestamps: CertificateTimestamp[];
}

/** A DevTools protocol session: Playwright's `CDPSession` for the page, or a target reached through one. */
export interface DevToolsSession {
  send(method: string, params?: Record<string, unknown>): Promise<unknown>;
  /** Every event of the session. */
  onEvent(listener: (method: string, params: unknown) => void): void;
}

const short = z.string().max(512);
const securityDetailsSchema = z.object({
  protocol: short.optional(),
  keyExchange: short.optional(),
  keyExchangeGroup: short.optional(),
  cipher: short.optional(),
  subjectName: short.optional(),
  sanList: z.array(short).max(1_000).optional(),
  issuer: short.optional(),
  validFrom: z.number().optional(),
  validTo: z.number().optional(),
  signedCertificateTimestampList: z
    .array(
      z.object({
        status: short,
        origin: short,
        logDescription: short,
        logId: short,
        timestamp: z.number(),
        hashAlgorithm: short,
        signatureAlgorithm: short,
        signatureData: z.string().max(4_096),
      }),
    )
    .max(1_000)
    .optional(),
  certificateTransparencyCompliance: short.optional(),
});
type SecurityDetails = z.infer<typeof securityDetailsSchema>;
const responseReceivedSchema = z.object({
  response: z.object({ url: z.string().max(64 * 1024), securityDetails: securityDetailsSchema.optional() }),
});
const certificateSchema = z.object({ tableNames: z.array(z.string()) });
const attachedSchema = z.object({
  sessionId: z.string().max(256),
  targetInfo: z.object({ type: z.string().max(64) }),
  waitingForDebugger: z.boolean(),
});
const messageFromTargetSchema = z.object({ sessionId: z.string().max(256), message: z.string() });
const detachedSchema = z.object({ sessionId: z.string().max(256) });
/** A message of a target, relayed: a reply (`id`) or an event (`method`). */
const relayedSchema = z.object({
  id: z.number().optional(),
  method: z.string().max(256).optional(),
  params: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.object({ message: z.string().max(4_096) }).optional(),
});

/** What Playwright tells of a response's TLS (`Response.securityDetails()`): the fallback for a missed event. */
export interface PlaywrightSecurityDetails {
  protocol?: string;
  subjectName?: string;
  issuer?: string;
  validFrom?: number;
  validTo?: number;
}

interface OriginEntry {
  origin: string;
  details: SecurityDetails | undefined;
  chain: Buffer[] | undefined;
  /** The sessions that saw a response of the origin: the certificate is asked of them first. */
  seenBy: Set<DevToolsSession>;
}

/**
 * A target (a frame in another process, a worker) reached through its parent's session without "flat"
 * sessions (`Target.sendMessageToTarget`; Playwright's `CDPSession` addresses its own target only): calls are
 * relayed and answered through `Target.receivedMessageFromTarget`, each bounded in time.
 */
class RelayedSession implements DevToolsSession {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private readonly listeners: Array<(method: string, params: unknown) => void> = [];

  constructor(
    private readonly parent: DevToolsSession,
    readonly sessionId: string,
    private readonly callMs: number,
  ) {}

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${this.callMs} ms`));
      }, this.callMs);
      this.pending.set(id, { resolve, reject, timer });
      this.parent
        .send('Target.sendMessageToTarget', {
          sessionId: this.sessionId,
          message: JSON.stringify({ id, method, params }),
        })
        .catch((e: unknown) => this.settle(id, undefined, e instanceof Error ? e : new Error(String(e))));
    });
  }

  onEvent(listener: (method: string, params: unknown) => void): void {
    this.listeners.push(listener);
  }

  /** A message the target sent (relayed by the parent). */
  deliver(text: string): void {
    let parsed: z.infer<typeof relayedSchema>;
    try {
      parsed = relayedSchema.parse(JSON.parse(text));
    } catch {
      return;
    }
    if (parsed.id !== undefined) {
      this.settle(parsed.id, parsed.result, parsed.error ? new Error(parsed.error.message) : undefined);
    } else if (parsed.method) {
      for (const l of this.listeners) l(parsed.method, parsed.params);
    }
  }

  /** The target is gone: every call still waiting fails. */
  detach(): void {
    for (const id of [...this.pending.keys()]) this.settle(id, undefined, new Error('target detached'));
  }

  private settle(id: number, result: unknown, error: Error | undefined): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (error) p.reject(error);
    else p.resolve(result);
  }
}

/**
 * Records the TLS of every origin a page reaches over https, from the page's DevTools session and, through it,
 * from every frame running in another process and every worker (auto-attached, each resumed at once): the
 * security details of the first response of each origin (protocol, cipher, key exchange, leaf names and
 * validity, signed certificate timestamps, CT verdict) and its certificates (`Network.getCertificate`, asked as
 * soon as the origin is seen, while the target still holds them). Bounded by `TLS_LIMITS`: origins past the
 * bound are counted, chains and timestamps cut, oversized certificates dropped. What a renderer reports is what
 * is recorded: the browser's word, checked for shape only.
 */
export class TlsRecorder {
  private readonly entries = new Map<string, OriginEntry>();
  private readonly omittedOrigins = new Set<string>();
  private readonly sessions: DevToolsSession[] = [];
  private readonly work = new Set<Promise<void>>();
  private targets = 0;

  constructor(private readonly limits: TlsLimits = TLS_LIMITS) {}

  /**
   * Listens on `session` (the page's): enables its Network domain and auto-attaches to the targets it starts,
   * waiting for each only until its Network domain is on. @throws the session's error when it cannot be enabled.
   */
  async attach(session: DevToolsSession): Promise<void> {
    await this.listen(session, 0);
  }

  /**
   * A response as Playwright reported it (every frame, whatever its process): its origin is recorded, with
   * Playwright's security details when no DevTools event gave richer ones.
   */
  noteResponse(url: string, details: PlaywrightSecurityDetails | null): void {
    const entry = this.entryFor(url);
    if (!entry || entry.details || !details) return;
    entry.details = {
      ...(details.protocol !== undefined ? { protocol: details.protocol.slice(0, 512) } : {}),
      ...(details.subjectName !== undefined ? { subjectName: details.subjectName.slice(0, 512) } : {}),
      ...(details.issuer !== undefined ? { issuer: details.issuer.slice(0, 512) } : {}),
      ...(details.validFrom !== undefined ? { validFrom: details.validFrom } : {}),
      ...(details.validTo !== undefined ? { validTo: details.validTo } : {}),
    };
  }

  /**
   * Waits (at most `ms`) for the certificate requests still running, asks once more, through every session,
   * for the origins still without certificates, and returns each origin's record in the order first seen, with
   * the number of origins past the bound.
   */
  async finish(ms: number): Promise<{ origins: OriginTlsDetail[]; omitted: number }> {
    const deadline = Date.now() + ms;
    await withDeadline(Promise.allSettled([...this.work]), deadline);
    for (const entry of this.entries.values()) {
      if (Date.now() >= deadline) break;
      if (entry.chain && entry.chain.length > 0) continue;
      const order = [...entry.seenBy, ...this.sessions.filter((s) => !entry.seenBy.has(s))];
      for (const session of order) {
        if (Date.now() >= deadline) break;
        const chain = await withDeadline(this.certificate(session, entry.origin), deadline);
        if (chain && chain.length > 0) {
          entry.chain = chain;
          break;
        }
      }
    }
    // All chains within one budget, in the order the origins were seen.
    let budget = this.limits.chainBytes;
    for (const entry of this.entries.values()) {
      const chain = entry.chain ?? [];
      let kept = 0;
      while (kept < chain.length && (chain[kept]?.length ?? 0) <= budget) {
        budget -= chain[kept]?.length ?? 0;
        kept++;
      }
      entry.chain = chain.slice(0, kept);
    }
    return {
      origins: [...this.entries.values()].map(describe(this.limits)),
      omitted: this.omittedOrigins.size,
    };
  }

  private async listen(session: DevToolsSession, depth: number): Promise<void> {
    this.sessions.push(session);
    const children = new Map<string, RelayedSession>();
    session.onEvent((method, params) => {
      if (method === 'Network.responseReceived') this.onResponse(session, params);
      else if (method === 'Target.attachedToTarget') this.onAttached(session, children, depth, params);
      else if (method === 'Target.receivedMessageFromTarget') {
        const m = messageFromTargetSchema.safeParse(params);
        if (m.success) children.get(m.data.sessionId)?.deliver(m.data.message);
      } else if (method === 'Target.detachedFromTarget') {
        const d = detachedSchema.safeParse(params);
        if (d.success) {
          children.get(d.data.sessionId)?.detach();
          children.delete(d.data.sessionId);
        }
      }
    });
    await session.send('Network.enable');
    if (depth < this.limits.depth) {
      await session.send('Target.setAutoAttach', {
        autoAttach: true,
        waitForDebuggerOnStart: true,
        flatten: false,
      });
    }
  }

  private onAttached(
    parent: DevToolsSession,
    children: Map<string, RelayedSession>,
    depth: number,
    params: unknown,
  ): void {
    const a = attachedSchema.safeParse(params);
    if (!a.success) return;
    const child = new RelayedSession(parent, a.data.sessionId, this.limits.callMs);
    const resume = () =>
      a.data.waitingForDebugger
        ? child.send('Runtime.runIfWaitingForDebugger').then(
            () => undefined,
            () => undefined,
          )
        : Promise.resolve();
    if (this.targets >= this.limits.targets) {
      // Past the bound the target is only let go: never left waiting for us.
      this.track(resume());
      return;
    }
    this.targets++;
    children.set(a.data.sessionId, child);
    this.track(
      this.listen(child, depth + 1)
        .catch(() => undefined)
        .finally(resume),
    );
  }

  private onResponse(session: DevToolsSession, params: unknown): void {
    const r = responseReceivedSchema.safeParse(params);
    if (!r.success) return;
    const entry = this.entryFor(r.data.response.url);
    if (!entry) return;
    const first = entry.seenBy.size === 0;
    entry.seenBy.add(session);
    if (r.data.response.securityDetails && !entry.details?.cipher)
      entry.details = r.data.response.securityDetails;
    if (first || !entry.chain) {
      this.track(
        this.certificate(session, entry.origin).then((chain) => {
          if (chain && chain.length > 0 && !entry.chain?.length) entry.chain = chain;
        }),
      );
    }
  }

  /** The record of `url`'s origin when it is https, created at first sight within the bound. */
  private entryFor(url: string): OriginEntry | undefined {
    let origin: string;
    try {
      const u = new URL(url);
      if (u.protocol !== 'https:' && u.protocol !== 'wss:') return undefined;
      origin = new URL(`https://${u.host}`).origin;
    } catch {
      return undefined;
    }
    const known = this.entries.get(origin);
    if (known) return known;
    if (this.entries.size >= this.limits.origins) {
      // Counted, not kept; the count itself is bounded by what a capture's time allows.
      if (this.omittedOrigins.size < 100_000) this.omittedOrigins.add(origin);
      return undefined;
    }
    const entry: OriginEntry = { origin, details: undefined, chain: undefined, seenBy: new Set() };
    this.entries.set(origin, entry);
    return entry;
  }

  /** The certificates `session` holds for `origin` (DER, bounded), or undefined when it has none. */
  private async certificate(session: DevToolsSession, origin: string): Promise<Buffer[] | undefined> {
    const answer = await session.send('Network.getCertificate', { origin }).catch(() => undefined);
    const parsed = certificateSchema.safeParse(answer);
    if (!parsed.success || parsed.data.tableNames.length === 0) return undefined;
    const out: Buffer[] = [];
    for (const b64 of parsed.data.tableNames.slice(0, this.limits.chainCerts)) {
      if (b64.length > Math.ceil((this.limits.certBytes * 4) / 3) + 4) continue;
      const der = Buffer.from(b64, 'base64');
      if (der.length > 0 && der.length <= this.limits.certBytes) out.push(der);
    }
    return out;
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch(() => undefined);
    this.work.add(tracked);
    void tracked.finally(() => this.work.delete(tracked));
  }
}

/** Resolves as `promise`, or with undefined at `deadline` (epoch ms). */
function withDeadline<T>(promise: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const stop = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([promise, stop]).finally(() => clearTimeout(timer));
}

/** Seconds since the epoch (the DevTools protocol's) as ISO 8601, or the empty string when unknown. */
function isoOfSeconds(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return '';
  const d = new Date(s * 1000);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

function pemOf(der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

/** An origin's record: the leaf read from its certificates when there are any, else from the details. */
function describe(limits: TlsLimits): (entry: OriginEntry) => OriginTlsDetail {
  return (entry) => {
    const d = entry.details ?? {};
    const chain = entry.chain ?? [];
    let leaf: X509Certificate | undefined;
    try {
      leaf = chain[0] ? new X509Certificate(chain[0]) : undefined;
    } catch {
      leaf = undefined;
    }
    const date = (s: string) => {
      const t = new Date(s);
      return Number.isNaN(t.getTime()) ? '' : t.toISOString();
    };
    const scts = (d.signedCertificateTimestampList ?? []).slice(0, limits.scts);
    return {
      origin: entry.origin,
      protocol: d.protocol || null,
      cipher: d.cipher || null,
      keyExchange: d.keyExchangeGroup || d.keyExchange || null,
      subject: leaf ? leaf.subject.replaceAll('\n', ', ') : (d.subjectName ?? ''),
      issuer: leaf ? leaf.issuer.replaceAll('\n', ', ') : (d.issuer ?? ''),
      validFrom: leaf ? date(leaf.validFrom) : isoOfSeconds(d.validFrom),
      validTo: leaf ? date(leaf.validTo) : isoOfSeconds(d.validTo),
      sha256Fingerprint: chain[0] ? createHash('sha256').update(chain[0]).digest('hex') : null,
      chainLength: chain.length,
      scts: scts.length,
      ctCompliance: d.certificateTransparencyCompliance || null,
      chain: chain.map(pemOf),
      sanList: (d.sanList ?? []).slice(0, 100),
      signedCertificateTimestamps: scts,
    };
  };
}

/** `capture.json`'s summary of an origin's TLS (the record without the certificates and timestamps). */
export function summaryOf(detail: OriginTlsDetail): OriginTls {
  const { chain: _chain, sanList: _sans, signedCertificateTimestamps: _scts, ...summary } = detail;
  return summary;
}

/**
 * `capture/tls.json`: every recorded origin with its certificates (PEM, leaf first) and signed certificate
 * timestamps, and the number of origins past the bound.
 */
export function tlsFile(origins: OriginTlsDetail[], omitted: number): Buffer {
  return Buffer.from(
    JSON.stringify(
      {
        format: 'notary-capture-tls/1',
        source:
          'Chromium DevTools protocol: Network.responseReceived securityDetails and Network.getCertificate (the path Chromium verified, leaf first)',
        origins,
        omitted,
      },
      null,
      2,
    ),
  );
}
