import type { Bridge, SavedFile } from '../../common/bridge';
import type { NotaryClient } from '../../common/client';
import { ClientError } from '../../common/errors';

/** Offers bytes as a download (`<a download>`): the browser saves them where its settings say. */
function downloadBytes(bytes: Uint8Array, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The web bridge's save and open methods. */
export type WebSaves = Pick<
  Bridge,
  'saveCertificate' | 'openCertificate' | 'saveTimestamp' | 'saveAtaDraft' | 'saveCertidao' | 'openExternal'
>;

/** Saves as browser downloads, opens in new tabs (only web links). */
export function webSaves(client: NotaryClient): WebSaves {
  return {
    saveCertificate: async (id, language): Promise<SavedFile> => {
      const file = await client.certificate(id, language);
      downloadBytes(file.bytes, file.fileName, 'application/pdf');
      return { fileName: file.fileName, ...(file.signed ? { signed: file.signed } : {}) };
    },
    openCertificate: async (id, language): Promise<SavedFile> => {
      // Opened before the request: browsers only allow a new tab directly from the click.
      const tab = window.open('', '_blank');
      try {
        const file = await client.certificate(id, language);
        const url = URL.createObjectURL(
          new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: 'application/pdf' }),
        );
        if (tab) tab.location.href = url;
        else downloadBytes(file.bytes, file.fileName, 'application/pdf');
        setTimeout(() => URL.revokeObjectURL(url), 5 * 60_000);
        return { fileName: file.fileName, ...(file.signed ? { signed: file.signed } : {}) };
      } catch (e) {
        tab?.close();
        throw e;
      }
    },
    saveAtaDraft: async (id, requester): Promise<SavedFile> => {
      const file = await client.ataDraft(id, requester ?? undefined);
      downloadBytes(file.bytes, file.fileName, 'application/pdf');
      return { fileName: file.fileName };
    },
    saveCertidao: async (id): Promise<SavedFile> => {
      const file = await client.certidao(id);
      downloadBytes(file.bytes, file.fileName, 'application/pdf');
      return { fileName: file.fileName };
    },
    saveTimestamp: async (id): Promise<SavedFile> => {
      const file = await client.timestamp(id);
      downloadBytes(file.bytes, file.fileName, 'application/timestamp-reply');
      return { fileName: file.fileName };
    },
    openExternal: async (url) => {
      const u = new URL(url);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') {
        throw new ClientError({ kind: 'forbidden', message: 'Only web links are opened' });
      }
      window.open(u.href, '_blank', 'noopener,noreferrer');
    },
  };
}
