import { Counter, Histogram, type Registry } from 'prom-client';
import type { ServiceActivity } from '../../ports/activity';
import type { ChainKind } from '../../ports/chains';
import { failureOutcome } from './instrument';

/**
 * The domain's own work counted (`ServiceActivity`): documents notarized, certificates issued, anchoring batches
 * settled and their confirmation lag. Labels are short fixed lists (how the bytes came in, a PAdES level, an
 * outcome, a chain): never a tenant, a user or a document.
 */

/** `ServiceActivity` counting into a registry, and the chains whose anchoring counters start at zero. */
export interface ActivityMetrics extends ServiceActivity {
  /** Starts the anchoring counters of `chains` at zero (a rate over a counter born at its first failure misses it). */
  anchorsOn(chains: readonly ChainKind[]): void;
}

/**
 * Bucket bounds of the confirmation lag, seconds: from a devnet's instant block to a Bitcoin-anchored Stacks
 * transaction several blocks deep (hours).
 */
const LAG_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400, 43_200, 86_400];

/** The activity counters and the confirmation-lag histogram of `registry`. */
export function activityMetrics(registry: Registry): ActivityMetrics {
  const notarized = new Counter({
    name: 'notary_documents_notarized_total',
    help: 'Documents recorded with a serial number, by how their bytes came in (upload, ipfs, web-capture, ...)',
    labelNames: ['source'] as const,
    registers: [registry],
  });
  const certificates = new Counter({
    name: 'notary_certificates_total',
    help: 'Certificate requests ended, by PAdES level (reached; asked when failed; unsigned) and outcome',
    labelNames: ['level', 'outcome'] as const,
    registers: [registry],
  });
  const batches = new Counter({
    name: 'notary_anchoring_batches_total',
    help: 'Anchoring batches settled, by chain and outcome (confirmed, failed)',
    labelNames: ['chain', 'outcome'] as const,
    registers: [registry],
  });
  const attemptFailures = new Counter({
    name: 'notary_anchoring_attempt_failures_total',
    help: 'Attempts of anchoring transactions that failed and are retried (endpoint down, refused), by chain',
    labelNames: ['chain'] as const,
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'notary_anchoring_confirmation_seconds',
    help: "Time from a batch's cut to its transaction's confirmation, by chain",
    labelNames: ['chain'] as const,
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  notarized.inc({ source: 'upload' }, 0);
  certificates.inc({ level: 'unsigned', outcome: 'ok' }, 0);
  return {
    documentNotarized(sourceType) {
      notarized.inc({ source: sourceType });
    },
    certificateIssued(level, ended) {
      const outcome = typeof ended === 'string' ? ended : failureOutcome(ended.error);
      certificates.inc({ level, outcome });
    },
    anchorBatchConfirmed(chain, lagSeconds) {
      batches.inc({ chain, outcome: 'confirmed' });
      lag.observe({ chain }, lagSeconds);
    },
    anchorBatchFailed(chain) {
      batches.inc({ chain, outcome: 'failed' });
    },
    anchorAttemptFailed(chain) {
      attemptFailures.inc({ chain });
    },
    anchorsOn(chains) {
      for (const chain of chains) {
        for (const outcome of ['confirmed', 'failed']) batches.inc({ chain, outcome }, 0);
        attemptFailures.inc({ chain }, 0);
        lag.zero({ chain });
      }
    },
  };
}
