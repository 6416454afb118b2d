import type { FairQueue } from '@notary/platform/fair-queue';
import type { Logger } from '@notary/platform/log';
import type { Config, VerifyEndpoints } from './config';
import type { Database } from './db';
import type { AcervoFeedCache } from './domain/acervo/cache';
import type { CertificateContext } from './domain/certificates/service';
import type { PublicVerifyCache } from './domain/documents/verify-cache';
import type { TransparencyLog } from './domain/log/transparency-log';
import type { Witness } from './domain/log/witness';
import type { LogWitnessing } from './domain/log/witnessing';
import type { MembershipLookup } from './domain/tenancy/resolve';
import type { ServiceActivity } from './ports/activity';
import type { AnchoringQueue } from './ports/anchoring-queue';
import type { CaptureRecordReader, WebCapturer } from './ports/capture';
import type { OrganizationDirectory } from './ports/directory';
import type { FreeSpace } from './ports/free-space';
import type { TokenVerifier } from './ports/identity';
import type { IpfsGateways } from './ports/ipfs';
import type { Mailer } from './ports/mail';
import type { MonitorQueue } from './ports/monitor-queue';
import type { OriginalSignatureReader } from './ports/original-signatures';
import type { QuotaCounter, RateLimiter } from './ports/rate-limit';
import type { RevocationSource } from './ports/revocation';
import type { DocumentSigner } from './ports/signer';
import type { ObjectStorage } from './ports/storage';
import type { TimestampAuthority } from './ports/tsa';

/** Everything the HTTP layer and the procedures use, built once by the composition root (`main.ts`). */
export interface AppDeps {
  config: Config;
  /**
   * The service's root logger (`LOG_LEVEL`; JSON lines in production). Code logs through a child naming its
   * module (`log.child({ module: 'anchor' })`); request code through `req.log`, which carries the request id.
   */
  log: Logger;
  /**
   * The URL the service names itself with (`PUBLIC_URL`, else `http://<host>:<port>` as resolved at start),
   * without trailing slash: the base of links in mail (e.g. the team invitation's join link).
   */
  publicUrl: string;
  /**
   * The service secret (`SECRET`, else `DATA_DIR/secret`), at least 32 characters. Never use it as a key
   * directly: derive a purpose-specific key with HMAC (e.g. `domain/org/deletion-code.ts`).
   */
  secret: string;
  db: Database;
  storage: ObjectStorage;
  /**
   * Where a new document's anchoring is requested, in the transaction of its row: the pg-boss queue once
   * anchoring runs (`startService` attaches it), else nothing is taken (operator CLI, `ANCHORING=off`).
   */
  anchoringQueue: AnchoringQueue;
  /**
   * Where monitorings schedule their runs (pg-boss jobs with a start time), in the transaction that records
   * them: the job queue once it runs (`startService` attaches it), else a queue that refuses (operator CLI).
   */
  monitorQueue: MonitorQueue;
  tokens: TokenVerifier;
  memberships: MembershipLookup;
  /** Organizations, members and invitations as the identity provider keeps them (better-auth or Clerk). */
  directory: OrganizationDirectory;
  mailer: Mailer;
  verifyCache: PublicVerifyCache;
  /**
   * The transparency log (`domain/log/`): each record's leaf written in its transaction, the sequencer, the
   * checkpoints and tiles served at `/log`; its key in `DATA_DIR/transparency-log-key.pem`.
   */
  transparencyLog: TransparencyLog;
  /** The log's witnesses (`LOG_WITNESSES`; `domain/log/witnessing.ts`); undefined when none is configured. */
  logWitnessing?: LogWitnessing | undefined;
  /** This service as a witness of other logs (`WITNESS_LOGS`; `domain/log/witness.ts`); undefined: none. */
  witness?: Witness | undefined;
  /** Acervo feed pages, 5 minutes (`domain/acervo/cache.ts`). */
  acervoCache: AcervoFeedCache;
  /** PAdES signing key of certificates (`SIGNING_CERT`); undefined: certificates are unsigned. */
  signer: DocumentSigner | undefined;
  /** RFC 3161 TSA (`TSA_URL`); undefined: the timestamp route answers 503. */
  tsa: TimestampAuthority | undefined;
  /** OCSP answers and CRLs of the signing and TSA chains, for B-LT and B-LTA signatures (cached). */
  revocation: RevocationSource;
  /** Lists an uploaded PDF's own signatures for its certificate and receipt (in a bounded worker). */
  originalSignatures: OriginalSignatureReader;
  /** Web capture: Chromium behind the address-checking proxy; 503 per call without Chromium. */
  capturer: WebCapturer;
  /** Reads the record a stored capture screenshot carries (a web capture's certificate). */
  captureRecords: CaptureRecordReader;
  /**
   * The capture queue every tenant of this instance shares, keyed by tenant id (`CAPTURE_CONCURRENCY`,
   * `CAPTURE_TENANT_MAX`); its `snapshot()` is each tenant's share, for the operator.
   */
  captureQueue: FairQueue;
  /** Free space of the volumes intakes write to: the disk guard (`DISK_FREE_FLOOR_BYTES`). */
  freeSpace: FreeSpace;
  /** IPFS import: verified fetches from the trustless gateways, public gateway links (`IPFS_*`). */
  ipfs: IpfsGateways;
  /** The spec's rate limits (`RATE_LIMITS`, `REDIS_URL`): in process, in Redis, or off. */
  rateLimiter: RateLimiter;
  /** Team invitation mails per inviter and per organization per hour (`INVITATION_MAIL_LIMITS`). */
  invitationMailQuota: QuotaCounter;
  /**
   * Chain endpoints announced to verifiers (`GET /api/onchain/info`) to check receipts without the service:
   * the configured public ones, and the devnets' once they run (`startService` adds them).
   */
  verifyEndpoints: VerifyEndpoints;
  /**
   * Where the domain reports documents notarized, certificates issued and anchoring batches settled: the metrics'
   * counters once `/metrics` runs (`startServiceMetrics` replaces it), else nobody (`quietActivity`).
   */
  activity: ServiceActivity;
}

/**
 * What issuing a certificate needs of the composition root (the same for the owner's and the public route, and
 * for the tabelião's deferred signature).
 */
export function certificateContext(deps: AppDeps): CertificateContext {
  return {
    config: deps.config,
    publicUrl: deps.publicUrl,
    storage: deps.storage,
    ipfs: deps.ipfs,
    signer: deps.signer,
    tsa: deps.tsa,
    revocation: deps.revocation,
    secret: deps.secret,
    originalSignatures: deps.originalSignatures,
    captureRecords: deps.captureRecords,
    transparencyLog: deps.transparencyLog,
    activity: deps.activity,
    logWitnessing: deps.logWitnessing,
  };
}
