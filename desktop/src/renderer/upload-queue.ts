import type { DocumentDto, PublicDocumentDto } from '@notary/shared';
import { LIMITS } from '@notary/shared';
import type { Bridge, LocalFile } from '../common/bridge';
import { isClientError } from '../common/errors';

export type Stage =
  | 'hashing' // SHA-256 computed locally, with progress
  | 'checking' // public verify: is it notarized already?
  | 'existing' // yes: its record is shown, nothing is sent
  | 'ready' // waiting for consent and the user's go
  | 'queued'
  | 'uploading'
  | 'done'
  | 'cancelled'
  | 'error';

export interface QueueItem {
  key: string;
  file: LocalFile;
  stage: Stage;
  /** 0-100 of the current stage (hashing, uploading). */
  progress: number;
  hash: string | null;
  existing: PublicDocumentDto | null;
  doc: DocumentDto | null;
  error: unknown;
  /** The LGPD consent checkbox of this file. */
  consent: boolean;
  /** Job id of the running hash or upload (cancel). */
  jobId: string | null;
}

/**
 * The notarization queue, kept outside React so that it survives moving between screens: files are hashed
 * one at a time, checked against the public verify route, then uploaded one at a time once consented.
 * Subscribe with `useSyncExternalStore(queue.subscribe, queue.snapshot)`.
 */
export class UploadQueue {
  private items: QueueItem[] = [];
  private readonly listeners = new Set<() => void>();
  private preparing: Promise<void> = Promise.resolve();
  private uploading = false;

  constructor(private readonly bridge: Bridge) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): readonly QueueItem[] => this.items;

  private set(items: QueueItem[]): void {
    this.items = items;
    for (const listener of this.listeners) listener();
  }

  private patch(key: string, changes: Partial<QueueItem>): void {
    this.set(this.items.map((i) => (i.key === key ? { ...i, ...changes } : i)));
  }

  private get(key: string): QueueItem | undefined {
    return this.items.find((i) => i.key === key);
  }

  /** True while a hash or an upload runs (the tenant must not change under it). */
  busy(): boolean {
    return this.items.some((i) => ['hashing', 'checking', 'queued', 'uploading'].includes(i.stage));
  }

  /** Adds files: each is hashed, then looked up publicly, in the order given. */
  add(files: LocalFile[]): void {
    const added = files.map(
      (file): QueueItem => ({
        key: crypto.randomUUID(),
        file,
        stage: 'hashing',
        progress: 0,
        hash: null,
        existing: null,
        doc: null,
        error: null,
        consent: false,
        jobId: null,
      }),
    );
    this.set([...this.items, ...added]);
    for (const item of added) this.preparing = this.preparing.then(() => this.prepare(item.key));
  }

  private async prepare(key: string): Promise<void> {
    const item = this.get(key);
    if (item?.stage !== 'hashing') return;
    const jobId = crypto.randomUUID();
    this.patch(key, { jobId });
    try {
      const hash = await this.bridge.hashFile(item.file.id, jobId, ({ loaded, total }) =>
        this.patch(key, { progress: total > 0 ? Math.floor((loaded / total) * 100) : 100 }),
      );
      this.patch(key, { hash, stage: 'checking', progress: 100, jobId: null });
      const verify = await this.bridge.publicVerify(hash);
      if (verify.found && verify.document) this.patch(key, { stage: 'existing', existing: verify.document });
      else this.patch(key, { stage: 'ready' });
    } catch (e) {
      const cancelled = isClientError(e) && e.kind === 'cancelled';
      this.patch(key, { stage: cancelled ? 'cancelled' : 'error', error: cancelled ? null : e, jobId: null });
    }
  }

  setConsent(key: string, consent: boolean): void {
    this.patch(key, { consent });
  }

  /** The batch checkbox: consent for every file that can still be sent. */
  setConsentAll(consent: boolean): void {
    this.set(this.items.map((i) => (sendable(i) ? { ...i, consent } : i)));
  }

  /** Queues every consented, sendable file and starts the uploads. */
  submit(): void {
    this.set(
      this.items.map((i) =>
        sendable(i) && i.consent ? { ...i, stage: 'queued', progress: 0, error: null } : i,
      ),
    );
    void this.run();
  }

  private async run(): Promise<void> {
    if (this.uploading) return;
    this.uploading = true;
    try {
      for (;;) {
        const next = this.items.find((i) => i.stage === 'queued');
        if (!next) break;
        await this.uploadOne(next);
      }
    } finally {
      this.uploading = false;
    }
  }

  private async uploadOne(item: QueueItem): Promise<void> {
    const jobId = crypto.randomUUID();
    this.patch(item.key, { stage: 'uploading', progress: 0, jobId });
    try {
      // Consent is a literal `true`: the UI only queues files whose checkbox is ticked.
      if (!item.consent) throw new Error('consent missing');
      const doc = await this.bridge.upload(item.file.id, jobId, true, ({ loaded, total }) =>
        this.patch(item.key, { progress: total > 0 ? Math.min(99, Math.floor((loaded / total) * 100)) : 0 }),
      );
      this.patch(item.key, { stage: 'done', doc, progress: 100, jobId: null });
    } catch (e) {
      const cancelled = isClientError(e) && e.kind === 'cancelled';
      this.patch(item.key, {
        stage: cancelled ? 'cancelled' : 'error',
        error: cancelled ? null : e,
        jobId: null,
      });
    }
  }

  /** Stops a running hash or upload; a queued file goes back to "ready". */
  cancel(key: string): void {
    const item = this.get(key);
    if (!item) return;
    if (item.stage === 'queued') this.patch(key, { stage: 'ready' });
    else if (item.jobId) void this.bridge.cancel(item.jobId);
  }

  /** A cancelled or failed file is tried again from where it failed. */
  retry(key: string): void {
    const item = this.get(key);
    if (!item) return;
    if (item.hash === null) {
      this.patch(key, { stage: 'hashing', progress: 0, error: null });
      this.preparing = this.preparing.then(() => this.prepare(key));
    } else {
      this.patch(key, { stage: 'ready', error: null, progress: 0 });
    }
  }

  remove(key: string): void {
    const item = this.get(key);
    if (item?.jobId) void this.bridge.cancel(item.jobId);
    this.set(this.items.filter((i) => i.key !== key));
  }

  clearFinished(): void {
    this.set(this.items.filter((i) => !['done', 'existing', 'cancelled'].includes(i.stage)));
  }

  /** Everything forgotten (sign-out, tenant change); running jobs are cancelled. */
  reset(): void {
    for (const item of this.items) if (item.jobId) void this.bridge.cancel(item.jobId);
    this.set([]);
  }
}

/** Ready (hashed, not yet notarized) and within the 250 MB limit. */
export function sendable(item: QueueItem): boolean {
  return item.stage === 'ready' && item.file.size <= LIMITS.maxUploadBytes;
}
