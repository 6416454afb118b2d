import type { SourceType } from '@notary/shared';
import type { z } from 'zod';
import type { ChainKind } from './chains';

/**
 * What the domain reports of its own work for the operator's metrics (`/metrics`, docs/deployment.md, Metrics):
 * documents notarized, certificates issued, anchoring batches settled or failed. Facts only, never who or which
 * document: an adapter counts them (`adapters/metrics/activity.ts`); without metrics nothing listens
 * (`quietActivity`). Each call happens after the fact is committed, so a rolled-back write is never counted.
 */
export interface ServiceActivity {
  /** One document recorded with its serial (committed), by how its bytes came in (`Document.sourceType`). */
  documentNotarized(sourceType: z.infer<typeof SourceType>): void;
  /**
   * One certificate request that ended: `level` is the PAdES level reached (`B-B` to `B-LTA`) or `unsigned`,
   * or, when it failed, the level it was asked at; `ended` says how (`ok`; `shortfall`: signed below the level
   * asked; `aborted`: the client left; otherwise the error it failed with).
   */
  certificateIssued(level: string, ended: CertificateEnd): void;
  /**
   * One anchoring batch confirmed on `chain` (its transaction `confirmations` deep), `lagSeconds` after the batch
   * was handed to the chain's worker (the cut).
   */
  anchorBatchConfirmed(chain: ChainKind, lagSeconds: number): void;
  /** One anchoring batch on `chain` in its final `failed` state (refused too often, or another root anchored). */
  anchorBatchFailed(chain: ChainKind): void;
  /** One attempt of an anchoring transaction on `chain` that failed and will be retried (outage, refusal). */
  anchorAttemptFailed(chain: ChainKind): void;
}

/** How a certificate request ended (`ServiceActivity.certificateIssued`). */
export type CertificateEnd = 'ok' | 'shortfall' | 'aborted' | { error: unknown };

/** Reports to nobody: a process without metrics (operator CLI, `METRICS_PORT` unset, tests of the domain). */
export const quietActivity: ServiceActivity = {
  documentNotarized: () => {},
  certificateIssued: () => {},
  anchorBatchConfirmed: () => {},
  anchorBatchFailed: () => {},
  anchorAttemptFailed: () => {},
};
