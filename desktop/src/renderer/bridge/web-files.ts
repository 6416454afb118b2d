import { DocumentSchema, LIMITS } from '@notary/shared';
import type { Bridge, LocalFile, ProgressListener } from '../../common/bridge';
import type { NotaryClient } from '../../common/client';
import { ClientError, errorFromResponse, offlineError } from '../../common/errors';
import { hashBlob } from './hash';

/** The files the page holds (picked or dropped), by the ids handed to the UI. */
export interface FileRegistry {
  /** Registers `list` under fresh ids. */
  register(list: Iterable<File>): LocalFile[];
  /** The file of `id`. @throws ClientError `not-found` for an id not registered. */
  fileById(id: string): File;
}

/** An empty {@link FileRegistry}: the browser's `File` objects stay in memory, keyed by a random UUID. */
export function fileRegistry(): FileRegistry {
  const files = new Map<string, File>();
  return {
    register: (list) =>
      Array.from(list, (file) => {
        const id = crypto.randomUUID();
        files.set(id, file);
        return { id, name: file.name, size: file.size };
      }),
    fileById: (id) => {
      const file = files.get(id);
      if (!file) throw new ClientError({ kind: 'not-found', message: 'Unknown file: pick it again' });
      return file;
    },
  };
}

/** The web bridge's file methods. */
export type WebFiles = Pick<Bridge, 'pickFiles' | 'dropFiles' | 'hashFile' | 'upload' | 'cancel'>;

/**
 * Picking, hashing and uploading files in the browser: the file input and drops fill `registry`; hashing runs
 * here (WebCrypto / @noble/hashes) and uploads stream with XHR, both cancellable by their job id.
 */
export function webFiles(client: NotaryClient, registry: FileRegistry): WebFiles {
  const { register, fileById } = registry;
  const jobs = new Map<string, AbortController>();
  const runJob = async <T>(jobId: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    jobs.set(jobId, controller);
    try {
      return await fn(controller.signal);
    } finally {
      jobs.delete(jobId);
    }
  };
  return {
    pickFiles: () =>
      new Promise<LocalFile[]>((resolve) => {
        const input = document.createElement('input');
        input.type = 'file';
        input.multiple = true;
        input.addEventListener('change', () => resolve(register(input.files ?? [])), { once: true });
        input.addEventListener('cancel', () => resolve([]), { once: true });
        input.click();
      }),
    dropFiles: async (list) => register(list),
    hashFile: (fileId, jobId, onProgress) =>
      runJob(jobId, (signal) => hashBlob(fileById(fileId), onProgress, signal)),
    upload: (fileId, jobId, _consent, onProgress) =>
      runJob(jobId, async (signal) => {
        const file = fileById(fileId);
        if (file.size > LIMITS.maxUploadBytes) {
          throw new ClientError({
            kind: 'too-large',
            message: 'The file exceeds the 250 MB limit',
            status: 413,
          });
        }
        const body = await client.authorized((jwt) =>
          xhrUpload(client.uploadUrl(), jwt, file, onProgress, signal),
        );
        const doc = DocumentSchema.safeParse(body);
        if (!doc.success)
          throw new ClientError({ kind: 'server', message: 'Unexpected answer to the upload' });
        return doc.data;
      }),
    cancel: async (jobId) => jobs.get(jobId)?.abort(),
  };
}

/** Streams a `File` to `POST /api/documents/upload` with XHR (the only browser API with upload progress). */
function xhrUpload(
  url: string,
  jwt: string,
  file: File,
  onProgress: ProgressListener,
  signal: AbortSignal,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.setRequestHeader('authorization', `Bearer ${jwt}`);
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) =>
      onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onload = () => {
      let body: unknown;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        body = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(errorFromResponse(xhr.status, body, { get: (name) => xhr.getResponseHeader(name) }));
    };
    xhr.onerror = () => reject(offlineError(new URL(url).origin, new TypeError('network error')));
    xhr.onabort = () => reject(new ClientError({ kind: 'cancelled', message: 'Upload cancelled' }));
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    // Consent first: the server has it before the file's bytes (spec, What the service does: item 9, upload
    // consent is mandatory).
    const form = new FormData();
    form.append('consent', 'true');
    form.append('file', file, file.name);
    xhr.send(form);
  });
}
