import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type ActivityMetrics, activityMetrics } from './activity';

/**
 * The service's metrics in the Prometheus exposition format (prom-client), scraped from a port of its own
 * (`startMetricsServer`). Names follow Prometheus' conventions (base units, `_total` counters, a `notary_` prefix
 * on the service's own); no label carries a tenant, a user, a document or a URL: routes are templates, queues and
 * chains are names from a short fixed list.
 */

/** A queue whose state the metrics read at each scrape (`FairQueue.snapshot()`, or running and waiting alone). */
export interface WatchedQueue {
  snapshot(): { running: number; waiting: number; keys?: readonly { running: number; waiting: number }[] };
}

/** One chain's anchoring backlog at a scrape (`anchoringBacklog`). */
export interface ChainBacklog {
  chain: 'evm' | 'stacks';
  /** Documents not yet registered on the chain (not deleted). */
  pending: number;
  /** When the oldest of them was notarized; null when none is pending. */
  oldestPendingAt: Date | null;
  /** Anchoring transactions in their final `failed` state. */
  failedTransactions: number;
}

/** Read at each scrape; its failure leaves the gauges as they were and is counted (`notary_scrape_errors_total`). */
export type BacklogReader = () => Promise<ChainBacklog[]>;

/** The outside services the service asks on a request's behalf, each counted by outcome and timed. */
export type Dependency = 'tsa' | 'revocation' | 'ipfs';

/**
 * How a call ended: `ok`; `incomplete` (revocation data gathered for part of a chain only); otherwise the
 * service's error code in lower case (`bad_gateway`, `gateway_timeout`, ...), or `error` for anything else.
 */
export type Outcome = string;

/** One volume's free space at a scrape, with the floor intakes keep free (`DISK_FREE_FLOOR_BYTES`). */
export interface DiskReading {
  volume: 'data' | 'temp';
  /** Free bytes; `Number.POSITIVE_INFINITY` when nothing of the service writes there (left out of the gauge). */
  freeBytes: number;
}

/** The metrics of one service process. */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** Where the domain counts documents notarized, certificates issued and anchoring batches (`ServiceActivity`). */
  readonly activity: ActivityMetrics;
  /** Records one completed HTTP request: its method, route template, status and duration (seconds). */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** Reports `queue`'s depth and shares under `name` (`capture`, `ipfs-import`, `certificate-render`, ...). */
  watchQueue(name: string, queue: WatchedQueue): void;
  /**
   * Reports the anchoring backlog read by `read` at each scrape, and the batching window (`ANCHOR_BATCH_SECONDS`)
   * the alert on a stuck backlog counts in.
   */
  watchBacklog(read: BacklogReader, batchSeconds: number): void;
  /** Records one call to an outside service: which, how it ended, and how long it took (seconds). */
  observeDependency(dependency: Dependency, outcome: Outcome, seconds: number): void;
  /** Records one web capture (its queue wait left out): how it ended, and how long it took (seconds). */
  observeCapture(outcome: Outcome, seconds: number): void;
  /**
   * Reports the volumes' free space read by `read` at each scrape, and the floor (bytes; 0: no guard) intakes
   * keep free on each.
   */
  watchDisk(read: () => Promise<DiskReading[]>, floorBytes: number): void;
}

/** Bucket bounds of request durations, seconds: from a cached verify (ms) to a large upload (minutes). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 600];

/**
 * A fresh registry with the process' default metrics (CPU, resident memory, heap, event-loop lag, GC, handles:
 * `collectDefaultMetrics`) and the service's own (see `ServiceMetrics`).
 */
export function createServiceMetrics(): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'notary_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'notary_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer ending (or the client leaving), by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    observeRequest(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      durations.observe({ method, route }, seconds);
    },
    watchQueue: queueGauges(registry),
    watchBacklog: backlogGauges(registry),
    ...outcomeMetrics(registry),
    watchDisk: diskGauges(registry),
    activity: activityMetrics(registry),
  };
}

/** Bucket bounds of outside calls and captures, seconds: from a cached OCSP answer to a capture's deadline. */
const CALL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** The counters and histograms of outside calls and captures in `registry`. */
function outcomeMetrics(registry: Registry): Pick<ServiceMetrics, 'observeDependency' | 'observeCapture'> {
  const calls = new Counter({
    name: 'notary_dependency_requests_total',
    help: 'Calls to an outside service (tsa, revocation, ipfs), by outcome',
    labelNames: ['dependency', 'outcome'] as const,
    registers: [registry],
  });
  const callDurations = new Histogram({
    name: 'notary_dependency_request_duration_seconds',
    help: 'Duration of calls to an outside service (tsa, revocation, ipfs)',
    labelNames: ['dependency'] as const,
    buckets: CALL_BUCKETS,
    registers: [registry],
  });
  const captures = new Counter({
    name: 'notary_captures_total',
    help: 'Web captures run (queue wait left out), by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const captureDurations = new Histogram({
    name: 'notary_capture_duration_seconds',
    help: 'Duration of web captures (queue wait left out)',
    buckets: CALL_BUCKETS,
    registers: [registry],
  });
  // Zero from the start: a rate over a counter that appears at its first failure misses that failure.
  for (const dependency of ['tsa', 'revocation', 'ipfs'] as const) {
    calls.inc({ dependency, outcome: 'ok' }, 0);
  }
  captures.inc({ outcome: 'ok' }, 0);
  return {
    observeDependency(dependency, outcome, seconds) {
      calls.inc({ dependency, outcome });
      callDurations.observe({ dependency }, seconds);
    },
    observeCapture(outcome, seconds) {
      captures.inc({ outcome });
      captureDurations.observe(seconds);
    },
  };
}

/** The disk gauges of `registry`: each volume's free bytes, read at each scrape, and the floor. */
function diskGauges(registry: Registry): ServiceMetrics['watchDisk'] {
  let reader: (() => Promise<DiskReading[]>) | undefined;
  new Gauge({
    name: 'notary_disk_free_bytes',
    help: 'Free bytes of a volume the service writes intakes to (data: DATA_DIR and stored files; temp: captures)',
    labelNames: ['volume'] as const,
    registers: [registry],
    async collect() {
      const read = await reader?.().catch(() => undefined);
      for (const r of read ?? [])
        if (Number.isFinite(r.freeBytes)) this.set({ volume: r.volume }, r.freeBytes);
    },
  });
  const floor = new Gauge({
    name: 'notary_disk_floor_bytes',
    help: 'Free bytes intakes keep on each volume (DISK_FREE_FLOOR_BYTES; 0: no guard)',
    registers: [registry],
  });
  return (read, floorBytes) => {
    reader = read;
    floor.set(floorBytes);
  };
}

/** The queue gauges of `registry`, filled at each scrape from the queues watched. */
function queueGauges(registry: Registry): (name: string, queue: WatchedQueue) => void {
  const queues = new Map<string, WatchedQueue>();
  const each = (
    fill: (gauge: Gauge<'queue'>, name: string, state: ReturnType<WatchedQueue['snapshot']>) => void,
  ) =>
    function (this: Gauge<'queue'>) {
      for (const [name, queue] of queues) fill(this, name, queue.snapshot());
    };
  const gauge = (name: string, help: string, fill: Parameters<typeof each>[0]) =>
    new Gauge({ name, help, labelNames: ['queue'] as const, registers: [registry], collect: each(fill) });
  gauge('notary_queue_running', 'Places of a shared queue in use', (g, queue, s) =>
    g.set({ queue }, s.running),
  );
  gauge('notary_queue_waiting', 'Requests waiting for a place of a shared queue', (g, queue, s) =>
    g.set({ queue }, s.waiting),
  );
  gauge(
    'notary_queue_keys',
    'Tenants (or client addresses) holding places of a shared queue',
    (g, queue, s) => g.set({ queue }, s.keys?.length ?? 0),
  );
  gauge(
    'notary_queue_largest_share',
    'Places (running and waiting) held by the tenant or address holding the most of a shared queue',
    (g, queue, s) => g.set({ queue }, Math.max(0, ...(s.keys ?? []).map((k) => k.running + k.waiting))),
  );
  return (name, queue) => {
    queues.set(name, queue);
  };
}

/**
 * The anchoring gauges of `registry`, read from the database at each scrape: once per scrape, shared by the three
 * (a registry collects its metrics all at once, so the first `collect` starts the read and the others join it).
 */
function backlogGauges(registry: Registry): ServiceMetrics['watchBacklog'] {
  let reader: BacklogReader | undefined;
  let inFlight: Promise<ChainBacklog[] | undefined> | undefined;
  const errors = new Counter({
    name: 'notary_scrape_errors_total',
    help: 'Scrapes during which the anchoring backlog could not be read (the database did not answer)',
    registers: [registry],
  });
  const readOnce = (): Promise<ChainBacklog[] | undefined> => {
    if (!reader) return Promise.resolve(undefined);
    inFlight ??= reader()
      .catch(() => {
        errors.inc();
        return undefined;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
  const gauge = (name: string, help: string, value: (b: ChainBacklog, now: number) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['chain'] as const,
      registers: [registry],
      async collect() {
        const read = await readOnce();
        const now = Date.now();
        for (const b of read ?? []) this.set({ chain: b.chain }, value(b, now));
      },
    });
  gauge('notary_anchoring_pending_documents', 'Documents not yet registered on a chain', (b) => b.pending);
  gauge(
    'notary_anchoring_oldest_pending_seconds',
    'Age of the oldest document not yet registered on a chain (0 when none is pending)',
    (b, now) => (b.oldestPendingAt ? (now - b.oldestPendingAt.getTime()) / 1000 : 0),
  );
  gauge(
    'notary_anchoring_failed_transactions',
    'Anchoring transactions in their final failed state, by chain',
    (b) => b.failedTransactions,
  );
  const window = new Gauge({
    name: 'notary_anchoring_batch_seconds',
    help: 'The anchoring batch window (ANCHOR_BATCH_SECONDS)',
    registers: [registry],
  });
  return (read, batchSeconds) => {
    reader = read;
    window.set(batchSeconds);
  };
}
