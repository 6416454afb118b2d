import { chmod, mkdir, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { logQueueRefusals } from '@notary/platform/fair-queue-log';
import { createLogger, type Logger, lifecycleLogger, logFormatFor } from '@notary/platform/log';
import { INVITATION_MAIL_LIMITS, isLoopbackHost } from '@notary/shared';
import type { Express } from 'express';
import { redisInvalidationBus } from './adapters/cache-bus/redis';
import { createCapturer } from './adapters/capture/service';
import { archivingCapturer } from './adapters/capture/service/archive';
import { CAPTURE_QUEUE_MAX } from './adapters/capture/service/isolated-capturer';
import { readCaptureRecord } from './adapters/capture/service/screenshot-record';
import { captureSoftware, createWaczSigner } from './adapters/capture/service/wacz-signing';
import { type AnchoringChains, startChains } from './adapters/chains';
import { statfsFreeSpace } from './adapters/free-space/statfs';
import { createBetterAuthIdentity } from './adapters/identity/better-auth';
import { createIpfsGateways } from './adapters/ipfs';
import { fileLogSigner, logOriginFor } from './adapters/log-key/file';
import { createMailer } from './adapters/mail';
import { createOriginalSignatureReader } from './adapters/original-signatures';
import { createRateLimiter } from './adapters/rate-limit/limiter';
import { createQuotaCounter } from './adapters/rate-limit/quota';
import { connectRedis, type RedisConnection } from './adapters/redis/client';
import { createRevocationSource } from './adapters/revocation';
import { createSigner } from './adapters/signer';
import { FsObjectStorage } from './adapters/storage/fs';
import { createTimestampAuthority } from './adapters/tsa';
import { httpWitnessClient } from './adapters/witness-client/http';
import { fileCosigner, keptWitnessName } from './adapters/witness-key/file';
import { startAdminSocket } from './cli/admin-socket';
import { devnetEndpointLines, forgetDevnetEndpoints, recordDevnetEndpoints } from './cli/devnet-info';
import type { Config } from './config';
import { type Database, openDatabase } from './db';
import type { AppDeps } from './deps';
import { AcervoFeedCache } from './domain/acervo/cache';
import { createCaptureQueue } from './domain/documents/capture-share';
import { PublicVerifyCache } from './domain/documents/verify-cache';
import { TransparencyLog } from './domain/log/transparency-log';
import { Witness } from './domain/log/witness';
import { LogWitnessing } from './domain/log/witnessing';
import { runMonitor } from './domain/monitors/run';
import { runOperatorCommand } from './domain/operator/commands';
import { applyHttpTimeouts, createHttpApp } from './http/app';
import { capConnectionsPerAddress, trustedProxy } from './http/connection-cap';
import { createSignedFileRoute } from './http/files';
import { answerWhileStarting } from './http/starting';
import { type AnchoringRunner, startAnchoring } from './jobs/anchoring';
import { type JobQueue, startJobQueue } from './jobs/boss';
import { startLogWitnessing } from './jobs/log-witnessing';
import { startMonitorRuns } from './jobs/monitor-runs';
import { startOrgDeletionJob } from './jobs/org-deletion';
import { startOrphanSweepJob } from './jobs/orphan-sweep';
import { startReconcileJob, subscribeMembershipEvents } from './jobs/reconcile';
import { startServiceMetrics } from './metrics';
import { quietActivity } from './ports/activity';
import { type AnchoringQueue, idleAnchoringQueue } from './ports/anchoring-queue';
import { type InvalidationBus, localInvalidationBus } from './ports/cache-bus';
import { idleMonitorQueue, type MonitorQueue } from './ports/monitor-queue';
import type { ObjectStorage } from './ports/storage';
import { resolveSecret } from './secret';

/** The captures' own signing key under `DATA_DIR` (no `SIGNING_CERT`): what a backup names to keep apart. */
export { ANONYMOUS_KEY_FILE } from './adapters/capture/service/wacz-signing';

/** The running service: what `main.ts`, the CLI and the tests hold. */
export interface Service {
  deps: AppDeps;
  identity: ReturnType<typeof createBetterAuthIdentity>;
  /** Base URL the service answers at (e.g. `http://127.0.0.1:3000`). */
  url: string;
  app: Express;
  server: http.Server;
  /** The anchoring runner (`jobs/anchoring.ts`) and its devnets; undefined with `ANCHORING=off`. */
  anchoring: ServiceAnchoring | undefined;
  /** Where `/metrics` is served (`METRICS_PORT`); absent when metrics are off. */
  metricsUrl?: string;
  /**
   * Stops the service: HTTP stops accepting and drops its connections first, then everything the start made is
   * released in reverse order (jobs drain, chains close, the database last). A second call does nothing.
   */
  close(): Promise<void>;
  /** `close`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The anchoring runner with the devnets its chains run on (`ANCHORING=devnet`: tests read them back). */
export interface ServiceAnchoring extends AnchoringRunner {
  readonly devnets: AnchoringChains['devnets'];
}

/** The core without HTTP: database, storage, identity, mail. Used by the server and the operator CLI. */
export interface Core {
  config: Config;
  db: Database;
  secret: string;
  storage: ObjectStorage;
  identity: ReturnType<typeof createBetterAuthIdentity>;
  deps: AppDeps;
  /** Releases what `createCore` made in reverse order (membership events, cache bus, Redis, the database). */
  close(): Promise<void>;
}

/**
 * The service's root logger as configured: `LOG_LEVEL`, JSON lines in production, readable lines elsewhere
 * (`NODE_ENV`). `stream: 'stderr'` for the operator CLI, whose stdout is its output.
 */
export function serviceLogger(config: Config, stream: 'stdout' | 'stderr' = 'stdout'): Logger {
  return createLogger({ level: config.logLevel, format: logFormatFor(config.env), stream });
}

/**
 * Builds adapters from configuration and migrates the database: each port gets its production adapter when its
 * variables are set, else its embedded default (PGlite in `DATA_DIR`, files for storage and mail, in-process
 * identity and limits), so a start with no configuration runs the whole notarization flow.
 * `publicUrl` is the base URL links and tokens name. `anchoringQueue` is where uploads request anchoring
 * (default: nowhere, as in the operator CLI). `log` is the root logger (default: `serviceLogger(config)`).
 */
export async function createCore(
  config: Config,
  publicUrl: string,
  options: { anchoringQueue?: AnchoringQueue; monitorQueue?: MonitorQueue; log?: Logger } = {},
): Promise<Core> {
  const log = options.log ?? serviceLogger(config);
  await ensurePrivateDataDir(config.dataDir, lifecycleLogger(log, 'notary'));
  const secret = await resolveSecret(config.secret, config.dataDir);
  // Each resource is handed to the stack where it is made: a failure further on releases exactly what exists.
  const stack = new AsyncDisposableStack();
  try {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    stack.defer(() => db.close());
    let bus: InvalidationBus = localInvalidationBus;
    let redis: RedisConnection | undefined;
    // Several instances share rate limit budgets and cache invalidations through Redis (REDIS_URL).
    if (config.rateLimits.redisUrl) {
      const connection = await connectRedis(config.rateLimits.redisUrl, log.child({ module: 'redis' }));
      stack.defer(() => connection.destroy());
      redis = connection;
      const redisBus = await redisInvalidationBus(connection, log.child({ module: 'cache-bus' }));
      stack.defer(() => redisBus.close());
      bus = redisBus;
    }
    const rateLimitLog = log.child({ module: 'rate-limit' });
    const rateLimiter = createRateLimiter(config.rateLimits, redis, rateLimitLog);
    // A budget counted in fixed windows of `windowSeconds`, in Redis across instances (REDIS_URL).
    const quotaCounter = (prefix: string, windowSeconds: number) =>
      createQuotaCounter(config.rateLimits, redis, { windowSeconds, prefix, log: rateLimitLog });
    const invitationMailQuota = quotaCounter('invitation-mail', INVITATION_MAIL_LIMITS.windowSeconds);
    let storage: ObjectStorage;
    if (config.storage.kind === 's3') {
      // The AWS SDK is loaded only for S3 storage (about 30 MB a service on files would hold for nothing).
      const { S3ObjectStorage } = await import('./adapters/storage/s3');
      const s3 = new S3ObjectStorage(config.storage, { log: log.child({ module: 'storage' }) });
      await s3.ensureBucket();
      storage = s3;
    } else {
      const files = new FsObjectStorage({
        root: config.storage.root,
        secret,
        publicBaseUrl: () => publicUrl,
      });
      // Uploads cut short by a crash leave temp files behind; they are never objects, so clear the old ones.
      await files.removeStaleTempFiles();
      storage = files;
    }
    const mailer = createMailer(config.mail, log.child({ module: 'mail' }));
    const identity = createBetterAuthIdentity({
      db: db.orm.em.getKysely(),
      publicUrl,
      secret,
      sessionTtlSeconds: config.sessionTtlSeconds,
      allowedOrigins: config.allowedOrigins,
      mailer,
      // Sign-in and sign-up budgets per client IP in the service's own rate limit store (Redis across
      // instances), in place of better-auth's limiter; with RATE_LIMITS=off neither counts.
      rateLimit: false,
      limits: {
        signIn: { perWindow: config.authLimits.signInPerMinute, counter: quotaCounter('sign-in', 60) },
        signUp: { perWindow: config.authLimits.signUpPerHour, counter: quotaCounter('sign-up', 3600) },
        codeMail: { perWindow: config.authLimits.codeMailPerHour, counter: quotaCounter('code-mail', 3600) },
      },
      logLevel: config.logLevel === 'debug' ? 'debug' : 'warn',
      log: log.child({ module: 'identity' }),
    });
    await identity.migrate();
    const signer = config.signing ? await createSigner(config.signing) : undefined;
    const tsa = config.tsa ? await createTimestampAuthority(config.tsa) : undefined;
    const revocation = createRevocationSource(config.revocation);
    const originalSignatures = await createOriginalSignatureReader(config.signatureTrustCertsPath);
    const captureLog = log.child({ module: 'capture' });
    // Every capture's archive is packed from the capture process's parts and signed (WACZ Signing and
    // Verification 0.1.0): with the certificate signer and the TSA when configured, else with the service's
    // own key, made here on first start.
    const software = captureSoftware(config.serviceName);
    const captureProcesses = await createCapturer(config.capture, {
      publicUrl,
      serviceName: config.serviceName,
      log: captureLog,
      production: config.env === 'production',
      hiddenPaths: [
        config.dataDir,
        ...(config.signing ? [config.signing.certPath, config.signing.keyPath ?? ''] : []),
      ].filter((p) => p !== ''),
    });
    // The capture process started ahead for the next capture ends with the service.
    stack.defer(() => captureProcesses.close());
    const capturer = archivingCapturer(
      captureProcesses,
      await createWaczSigner({ signer, tsa, tsaUrl: config.tsa?.url, dataDir: config.dataDir, software }),
      { software, log: captureLog },
    );
    // The log's Ed25519 key and origin are made on first start and kept in DATA_DIR, like the WACZ key.
    const transparencyLog = new TransparencyLog(
      () => db.fork(),
      await fileLogSigner(config.dataDir, logOriginFor(publicUrl)),
      secret,
      log.child({ module: 'transparency-log' }),
    );
    stack.defer(() => transparencyLog.close());
    const { logWitnessing, witness } = await witnessingOf(config, db, transparencyLog, publicUrl, log);
    const deps: AppDeps = {
      config,
      log,
      publicUrl,
      secret,
      db,
      storage,
      anchoringQueue: options.anchoringQueue ?? idleAnchoringQueue,
      monitorQueue: options.monitorQueue ?? idleMonitorQueue,
      tokens: identity.verifier,
      memberships: identity.admin,
      directory: identity.directory,
      mailer,
      verifyCache: new PublicVerifyCache(bus),
      transparencyLog,
      logWitnessing,
      witness,
      acervoCache: new AcervoFeedCache(bus),
      signer,
      tsa,
      revocation,
      originalSignatures,
      capturer,
      captureRecords: { readRecord: readCaptureRecord },
      captureQueue: createCaptureQueue({
        concurrency: config.capture.concurrency,
        queueMax: CAPTURE_QUEUE_MAX,
        tenantMax: config.capture.tenantMax,
        retryAfterSeconds: Math.ceil(config.capture.timeoutMs / 1000),
      }),
      freeSpace: statfsFreeSpace({
        // What lives under DATA_DIR: the embedded database and the file storage (which may be mounted apart).
        data: [
          ...(config.databaseUrl === undefined || config.storage.kind === 'fs' ? [config.dataDir] : []),
          ...(config.storage.kind === 'fs' ? [config.storage.root] : []),
        ],
        // Where each capture's browser profile and archive are written (the capture process's TMPDIR parent).
        temp: [os.tmpdir()],
      }),
      ipfs: createIpfsGateways(config.ipfs),
      rateLimiter,
      invitationMailQuota,
      verifyEndpoints: {
        evmRpcUrls: [...config.verifyEndpoints.evmRpcUrls],
        stacksApiUrls: [...config.verifyEndpoints.stacksApiUrls],
      },
      activity: quietActivity,
    };
    // The operator's view of the shared queues: each refusal is logged with who held the places.
    logQueueRefusals('capture', deps.captureQueue, captureLog);
    for (const [use, queue] of Object.entries(deps.ipfs.queues)) logQueueRefusals(`ipfs-${use}`, queue, log);
    // Membership changes made through the provider in this process keep the role table in step.
    const membershipEvents = subscribeMembershipEvents({
      directory: deps.directory,
      fork: () => db.fork(),
      log: log.child({ module: 'identity' }),
    });
    stack.defer(() => membershipEvents.drain());
    const resources = stack.move();
    return { config, db, secret, storage, identity, deps, close: () => resources.disposeAsync() };
  } catch (e) {
    await releaseAfterFailedStart(stack, log);
    throw e;
  }
}

/**
 * The log's witnessing (`LOG_WITNESSES`) and this service as a witness of other logs (`WITNESS_LOGS`, its own
 * Ed25519 key kept like the log's); each undefined when not configured.
 */
async function witnessingOf(
  config: Config,
  db: Database,
  transparencyLog: TransparencyLog,
  publicUrl: string,
  log: Logger,
): Promise<{ logWitnessing: LogWitnessing | undefined; witness: Witness | undefined }> {
  const { logWitnesses } = config;
  const logWitnessing =
    logWitnesses.witnesses.length === 0
      ? undefined
      : new LogWitnessing(
          () => db.fork(),
          transparencyLog,
          logWitnesses.witnesses,
          logWitnesses.quorum,
          httpWitnessClient(),
          log.child({ module: 'witnessing' }),
        );
  if (!config.witness) return { logWitnessing, witness: undefined };
  const name =
    config.witness.name ??
    (await keptWitnessName(config.dataDir, logOriginFor(publicUrl).replace(/\/log$/, '/witness')));
  const cosigner = await fileCosigner(config.witness.keyFile, name);
  return { logWitnessing, witness: new Witness(() => db.fork(), cosigner, config.witness.logs) };
}

/**
 * After a start failed: releases what it made (its stack, in reverse order) and leaves the start's own error
 * to be thrown. A failure while releasing is logged, not thrown in its place.
 */
async function releaseAfterFailedStart(stack: AsyncDisposableStack, log: Logger): Promise<void> {
  try {
    await stack.disposeAsync();
  } catch (e) {
    log.child({ module: 'notary' }).error({ err: e }, 'releasing what a failed start made');
  }
}

/**
 * Stops `server` accepting and drops its connections (kept-alive ones included); resolves once it is closed.
 * Does nothing when it no longer listens.
 */
function closeServer(server: http.Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Creates `DATA_DIR` with mode 0700, and takes group and other permissions away from an existing one: it
 * holds the generated secret, the embedded database, stored files and the operator socket, which no other
 * local user may reach (the socket is safe from its first instant because its directory is).
 */
export async function ensurePrivateDataDir(dataDir: string, log: Logger): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const { mode } = await stat(dataDir);
  if ((mode & 0o077) !== 0) {
    await chmod(dataDir, mode & 0o700);
    log.warn(`DATA_DIR ${dataDir} was reachable by other users: set to mode 0700`);
  }
}

/** The warnings a start prints about what the configuration leaves open (docs/deployment.md, Deployment). */
export function startWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (!config.rateLimits.enabled) {
    warnings.push("RATE_LIMITS=off: the spec's rate limits are not enforced (benchmarks, bulk imports only)");
  }
  if (config.env === 'development' && config.hostExplicit && !isLoopbackHost(config.host)) {
    warnings.push(
      `NODE_ENV=development listening on ${config.host}: development defaults face the network; its conveniences ` +
        "(the e-mail access answer's token) stay served to direct requests from this machine only. " +
        'Deploy with NODE_ENV=production',
    );
  }
  return warnings;
}

/**
 * The base URL the service names itself with (session token issuer and audience, signed URLs): `PUBLIC_URL`
 * when set, else `http://<HOST or localhost>:<port>`. The CLI computes the same, so its tokens verify.
 */
export function publicUrlFor(config: Config, port: number): string {
  if (config.publicUrl) return config.publicUrl;
  // The development default (127.0.0.1, HOST unset) keeps the `localhost` URL that README and browsers use.
  const wildcard = config.host === '0.0.0.0' || config.host === '::';
  const host = wildcard || (!config.hostExplicit && config.host === '127.0.0.1') ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The periodic jobs every instance runs (organization deletions cut short, the orphan sweep, the membership
 * reconcile) and, on the embedded database, the operator CLI's socket; each handed to `stack` to stop.
 */
async function startHousekeeping(
  stack: AsyncDisposableStack,
  core: Core,
  config: Config,
  log: Logger,
): Promise<void> {
  // Organization deletions confirmed but cut short (the process running one died): finished here.
  const orgDeletions = startOrgDeletionJob({
    fork: () => core.db.fork(),
    ports: { storage: core.deps.storage, mailer: core.deps.mailer, directory: core.deps.directory },
    log: log.child({ module: 'org-deletion' }),
  });
  stack.defer(() => orgDeletions.stop());
  // Bytes of uploads whose process died before the row committed (orphaned objects).
  const orphanSweep = startOrphanSweepJob({
    fork: () => core.db.fork(),
    storage: core.deps.storage,
    intervalHours: config.orphanSweepHours,
    log: log.child({ module: 'storage' }),
  });
  stack.defer(() => orphanSweep.stop());
  // Repairs what membership events missed (events plus a periodic reconcile).
  const reconcile = startReconcileJob({
    fork: () => core.db.fork(),
    directory: core.deps.directory,
    intervalSeconds: config.reconcileIntervalSeconds,
    log: log.child({ module: 'reconcile' }),
  });
  stack.defer(() => reconcile.stop());
  // The embedded database admits one process: the operator CLI reaches it through this socket.
  if (core.db.kind === 'pglite') {
    const admin = await startAdminSocket(path.join(config.dataDir, 'admin.sock'), (command) =>
      runOperatorCommand(
        {
          em: core.db.fork(),
          identity: core.identity.admin,
          directory: core.deps.directory,
          storage: core.deps.storage,
        },
        command,
      ),
    );
    stack.defer(() => admin.close());
  }
}

/**
 * The monitorings' runs (`jobs/monitor-runs.ts`) on `jobQueue`, or on a job queue started here when anchoring
 * started none; what it starts is handed to `stack`, the runs in progress stopped before the queue.
 * @returns the queue monitorings schedule their runs through, and the job queue (the one given or started).
 */
async function startMonitoring(
  stack: AsyncDisposableStack,
  core: Core,
  jobQueue: JobQueue | undefined,
  log: Logger,
): Promise<{ runs: MonitorQueue; jobs: JobQueue }> {
  const { config } = core;
  let queue = jobQueue;
  if (!queue) {
    const started = await startJobQueue(core.db, config.databaseUrl, {
      pollingIntervalSeconds: config.jobPollingIntervalSeconds,
      onError: (e) => log.child({ module: 'jobs' }).error({ err: e }, 'pg-boss error'),
    });
    stack.defer(() => started.stop());
    queue = started;
  }
  const monitorLog = log.child({ module: 'monitor' });
  const runs = await startMonitorRuns(
    queue,
    (job, signal) => runMonitor(core.db.fork(), { ...core.deps, log: monitorLog }, job, { signal }),
    // A run is one capture (CAPTURE_TIMEOUT_MS), its notarization and, for the last, the certidão.
    {
      log: monitorLog,
      expireInSeconds: Math.ceil(config.capture.timeoutMs / 1000) + 120,
      pollingIntervalSeconds: config.jobPollingIntervalSeconds,
    },
  );
  // Before the queue stops: a run in progress fails now, while the database is open, and is retried later.
  stack.defer(() => runs.stop());
  return { runs: runs.queue, jobs: queue };
}

/**
 * The log's witnessing (`jobs/log-witnessing.ts`) on `jobs`, when `LOG_WITNESSES` names any: asked after every
 * checkpoint the log makes, and once now for whatever a stop left short of its quorum.
 */
async function startWitnessing(core: Core, jobs: JobQueue, log: Logger): Promise<void> {
  const witnessing = core.deps.logWitnessing;
  if (!witnessing) return;
  const witnessLog = log.child({ module: 'witnessing' });
  const { request } = await startLogWitnessing(jobs, witnessing, {
    retrySeconds: core.config.logWitnesses.retrySeconds,
    log: witnessLog,
    onState: (state) => {
      if (state.final)
        witnessLog.info({ size: state.size, cosignedBy: state.cosignedBy }, 'checkpoint cosigned');
    },
  });
  core.deps.transparencyLog.onCheckpoint(request);
  request();
}

/**
 * Starts the service: listens on `config.host:config.port` (0 picks a free port), then builds the core with
 * the resolved URL (`PUBLIC_URL` when set). Resolves once it accepts requests. `log` is the root logger
 * (default: `serviceLogger(config)`).
 */
export async function startService(config: Config, options: { log?: Logger } = {}): Promise<Service> {
  const log = options.log ?? serviceLogger(config);
  // Printed at every LOG_LEVEL, as the listening line is (`lifecycleLogger`).
  const notary = lifecycleLogger(log, 'notary');
  for (const warning of startWarnings(config)) notary.warn(`warning: ${warning}`);
  // Until the core is ready every request gets an answer at once (503, `/health` `starting`), never a hang.
  let handler: http.RequestListener = answerWhileStarting;
  const server = http.createServer((req, res) => handler(req, res));
  // Kept-alive connections outlive the clients' and load balancers' own idle timeouts (http/app.ts).
  applyHttpTimeouts(server, config.http);
  // One client address holds at most HTTP_MAX_CONNECTIONS_PER_IP connections; the trusted proxy is not counted.
  capConnectionsPerAddress(server, config.maxConnectionsPerIp, trustedProxy(config.trustProxy));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  // Everything made from here on is handed to the stack where it is made: a failed start releases exactly what
  // exists, in reverse order, and `close` releases all of it the same way.
  const stack = new AsyncDisposableStack();
  stack.defer(() => closeServer(server));
  try {
    const url = publicUrlFor(config, (server.address() as AddressInfo).port);
    // Uploads request anchoring from the job queue once it runs (below); until then, and with ANCHORING=off,
    // nothing is enqueued and the batcher's sweep finds the pending documents.
    let jobs: AnchoringQueue = idleAnchoringQueue;
    const anchoringQueue: AnchoringQueue = { enqueueAnchoring: (tx) => jobs.enqueueAnchoring(tx) };
    // Monitorings schedule their runs in the job queue once it runs (below).
    let monitorJobs: MonitorQueue = idleMonitorQueue;
    const monitorQueue: MonitorQueue = {
      scheduleRun: (tx, id, run, at) => monitorJobs.scheduleRun(tx, id, run, at),
    };
    const core = await createCore(config, url, { anchoringQueue, monitorQueue, log });
    let jobQueue: JobQueue | undefined;
    stack.defer(() => core.close());
    // The key other services' logs configure for this witness (LOG_WITNESSES there), at every LOG_LEVEL.
    if (core.deps.witness) notary.info(`witness verifier key ${core.deps.witness.verifierKey}`);
    // The log's first checkpoint, and whatever a stop left pending, before the first request.
    await core.deps.transparencyLog.integrate();
    const metrics = config.metrics
      ? await startServiceMetrics(config.metrics, core.deps, config.anchoring, () => core.db.fork())
      : undefined;
    if (metrics) stack.defer(() => metrics.server.close());
    const app = createHttpApp(core.deps, {
      ...(metrics ? { observeRequest: metrics.observeRequest } : {}),
      authHandler: (req, res) => core.identity.handler(req, res),
      ...(core.storage instanceof FsObjectStorage
        ? { filesRouter: createSignedFileRoute(core.storage) }
        : {}),
      publicUrl: () => url,
    });

    // Started in the reverse of the order they stop in: anchoring, its queue, then the periodic jobs and the
    // operator socket (closed first after HTTP).
    let anchoring: ServiceAnchoring | undefined;
    if (config.anchoring.mode !== 'off') {
      const anchorLog = log.child({ module: 'anchor' });
      // Anchoring, so each document's timestamp can be checked on a public chain without the service: the
      // chains the configuration names (the registry; devnets with ANCHORING=devnet), batch collection on a
      // timer, one worker per chain.
      const chains = await startChains(config.anchoring, (message, e) =>
        anchorLog.error({ err: e }, message),
      );
      stack.defer(() => chains.stop());
      const runner = await startAnchoring({
        config: config.anchoring,
        chains: chains.entries,
        fork: () => core.db.fork(),
        log: anchorLog,
        // Each batch anchors the log's checkpoint at its cut (docs/anchoring.md, The log checkpoint in every batch).
        checkpoint: (tx) => core.deps.transparencyLog.anchorableCheckpoint(tx),
        activity: core.deps.activity,
        // Batch windows are opened by the pg-boss job each upload enqueues; the timer is only the safety sweep.
        sweepSeconds: Math.max(30, config.anchoring.batchSeconds * 5),
      });
      stack.defer(() => runner.stop());
      anchoring = { ...runner, devnets: chains.devnets };
      // The devnets serve the interfaces of real networks, so receipts made on them can be checked the way
      // production ones are: their endpoints are printed for notary-verify and recorded for `devnet:info`.
      const devnets = chains.devnets;
      if (devnets) {
        // Announced to verifiers too (`GET /api/onchain/info`): the web verify page asks them from the browser.
        core.deps.verifyEndpoints.evmRpcUrls.unshift(devnets.evm.rpcUrl);
        core.deps.verifyEndpoints.stacksApiUrls.unshift(devnets.stacks.url);
        const lines = devnetEndpointLines(devnets);
        for (const line of lines) notary.info(line);
        await recordDevnetEndpoints(config.dataDir, lines).catch((e: unknown) => {
          notary.warn(`devnet endpoints not recorded for devnet:info: ${String(e)}`);
        });
        stack.defer(() => forgetDevnetEndpoints(config.dataDir));
      }
      // The upload's transaction enqueues a pg-boss job that opens a batch window (the job commits or rolls
      // back with the Document); the runner's timer stays as the sweep that finds anything a lost job left.
      const queue = await startJobQueue(core.db, config.databaseUrl, {
        pollingIntervalSeconds: config.jobPollingIntervalSeconds,
        onError: (e) => log.child({ module: 'jobs' }).error({ err: e }, 'pg-boss error'),
      });
      stack.defer(() => queue.stop());
      jobQueue = queue;
      // The document that makes ANCHOR_BATCH_MAX pending requests a collection at once: a burst of uploads is
      // cut by count, not split by the clock.
      await queue.registerAnchoring(
        () => runner.triggerCollection(),
        config.anchoring.batchSeconds,
        config.anchoring.batchMax,
      );
      jobs = queue;
    }
    // Monitorings' runs are jobs with a start time in the same queue (with ANCHORING=off too): a restart finds
    // them where they were, and the next due run goes ahead.
    const monitoring = await startMonitoring(stack, core, jobQueue, log);
    monitorJobs = monitoring.runs;
    await startWitnessing(core, monitoring.jobs, log);
    await startHousekeeping(stack, core, config, log);
    // Last in, so first out at shutdown: HTTP stops accepting before anything a request needs goes away.
    stack.defer(() => closeServer(server));
    const resources = stack.move();
    const close = () => resources.disposeAsync();
    // Ready: `/health` says ok from here on.
    handler = app;
    return {
      deps: core.deps,
      identity: core.identity,
      url,
      app,
      server,
      anchoring,
      ...(metrics ? { metricsUrl: metrics.server.url } : {}),
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (e) {
    await releaseAfterFailedStart(stack, log);
    throw e;
  }
}
