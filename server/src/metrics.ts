import type { EntityManager } from '@mikro-orm/core';
import type { RequestObserver } from '@notary/platform/http/request-log';
import {
  instrumentCapturer,
  instrumentIpfs,
  instrumentRevocation,
  instrumentTsa,
} from './adapters/metrics/instrument';
import { createServiceMetrics, type ServiceMetrics } from './adapters/metrics/registry';
import { type MetricsServer, startMetricsServer } from './adapters/metrics/server';
import type { AnchoringConfig } from './config/anchoring';
import type { AppDeps } from './deps';
import { anchoringBacklog } from './domain/anchoring/backlog';
import { certificateRenders, publicCertificateRenders } from './http/certificates';
import { routeTemplate } from './http/route-template';
import type { ChainKind } from './ports/chains';

/** The metrics of a running service: its registry, the request observer the HTTP app reports to, its server. */
export interface RunningMetrics {
  metrics: ServiceMetrics;
  observeRequest: RequestObserver;
  server: MetricsServer;
}

/**
 * Starts the metrics of the service (`METRICS_PORT`, `METRICS_HOST`; docs/deployment.md, Metrics): HTTP requests by route
 * template, the shared queues (captures, IPFS reads, certificate renders), the anchoring backlog of the chains
 * `anchoring` names (read through `fork()` at each scrape), the free space of the volumes against the disk floor,
 * and the process' own metrics. The ports that call outside services (`tsa`, `revocation`, `ipfs`, `capturer`)
 * are replaced in `deps` by their counted and timed wrappers, and `activity` by the counters of documents,
 * certificates and anchoring batches, so everything done from then on is counted: call it before the HTTP app and
 * the workers are made from `deps`.
 * @throws the metrics server's listen error.
 */
export async function startServiceMetrics(
  where: { port: number; host: string },
  deps: Pick<
    AppDeps,
    'captureQueue' | 'ipfs' | 'tsa' | 'revocation' | 'capturer' | 'freeSpace' | 'config' | 'activity'
  >,
  anchoring: AnchoringConfig,
  fork: () => EntityManager,
): Promise<RunningMetrics> {
  const metrics = createServiceMetrics();
  if (deps.tsa) deps.tsa = instrumentTsa(deps.tsa, metrics);
  deps.revocation = instrumentRevocation(deps.revocation, metrics);
  deps.ipfs = instrumentIpfs(deps.ipfs, metrics);
  deps.capturer = instrumentCapturer(deps.capturer, metrics);
  deps.activity = metrics.activity;
  const { freeSpace } = deps;
  metrics.watchDisk(
    async () =>
      Promise.all(
        (['data', 'temp'] as const).map(async (volume) => ({
          volume,
          freeBytes: await freeSpace.freeBytes(volume),
        })),
      ),
    deps.config.diskFreeFloorBytes,
  );
  metrics.watchQueue('capture', deps.captureQueue);
  for (const [use, queue] of Object.entries(deps.ipfs.queues)) metrics.watchQueue(`ipfs-${use}`, queue);
  metrics.watchQueue('certificate-render', certificateRenders);
  metrics.watchQueue('public-certificate-render', {
    snapshot: () => ({
      running: publicCertificateRenders.running,
      waiting: publicCertificateRenders.waiting,
    }),
  });
  const chains = anchoredChains(anchoring);
  metrics.activity.anchorsOn(chains);
  if (anchoring.mode !== 'off' && chains.length > 0) {
    metrics.watchBacklog(() => anchoringBacklog(fork(), chains), anchoring.batchSeconds);
  }
  const server = await startMetricsServer(metrics.registry, where);
  return {
    metrics,
    server,
    observeRequest: (req, res, seconds) =>
      metrics.observeRequest(req.method, routeTemplate(req, res), res.statusCode, seconds),
  };
}

/** The chains the service anchors on (both devnets with `ANCHORING=devnet`; none when off). */
function anchoredChains(anchoring: AnchoringConfig): ChainKind[] {
  if (anchoring.mode === 'off') return [];
  if (anchoring.mode === 'devnet') return ['evm', 'stacks'];
  return [...(anchoring.evm ? (['evm'] as const) : []), ...(anchoring.stacks ? (['stacks'] as const) : [])];
}
