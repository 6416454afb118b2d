import { checkCertidaoChain } from '@notary/verify/monitor-chain';
import type { Bridge } from '../../common/bridge';
import {
  AnchorFileError,
  badAnchor,
  type ChainEndpoints,
  type CheckOptions,
  checkAgainstCertificate,
  endpointProblem,
  judgeAt,
  MAX_ANCHOR_FILE_BYTES,
  MAX_CERTIFICATE_BYTES,
  MAX_CHECKED_FILE_BYTES,
  trustAnchors,
} from '../../common/certificate-check';
import { ClientError } from '../../common/errors';
import type { FileRegistry } from './web-files';

/** The bytes of a picked or dropped file. @throws ClientError `file` when the browser cannot read it. */
async function readBlob(blob: Blob): Promise<Uint8Array> {
  try {
    return new Uint8Array(await blob.arrayBuffer());
  } catch (e) {
    throw new ClientError({ kind: 'file', message: `Cannot read the file: ${String(e)}` });
  }
}

/**
 * The certificate check in the page: the same input checks as Electron main's IPC schema, then the six checks
 * (`checkAgainstCertificate`) on the registered files' bytes.
 */
export function webCertificateCheck({
  fileById,
}: Pick<FileRegistry, 'fileById'>): Pick<Bridge, 'checkCertificate' | 'checkCertidaoChain'> {
  return {
    checkCertidaoChain: async (fileId) => {
      const file = fileById(fileId);
      if (file.size > MAX_CERTIFICATE_BYTES) {
        throw new ClientError({ kind: 'too-large', message: 'The file exceeds the 250 MB limit' });
      }
      return checkCertidaoChain(await readBlob(file));
    },
    checkCertificate: async (fileId, certificateId, endpoints: ChainEndpoints, options: CheckOptions) => {
      // The same checks as Electron main's IPC schema.
      const urls = [...endpoints.evmRpcUrls, ...endpoints.stacksApiUrls];
      if (urls.some((u) => endpointProblem(u) !== null)) {
        throw new ClientError({
          kind: 'invalid-input',
          message: 'An endpoint is not https (or loopback http)',
        });
      }
      const at = judgeAt(options.at);
      const file = fileById(fileId);
      const certificate = fileById(certificateId);
      if (file.size > MAX_CHECKED_FILE_BYTES || certificate.size > MAX_CERTIFICATE_BYTES) {
        throw new ClientError({ kind: 'too-large', message: 'The file exceeds the 250 MB limit' });
      }
      let anchors: Uint8Array[] | null;
      try {
        anchors = await trustAnchors(options.trust, async (id) => {
          const pem = fileById(id);
          if (pem.size > MAX_ANCHOR_FILE_BYTES) throw new AnchorFileError(pem.name, 'too-large');
          return { name: pem.name, bytes: await readBlob(pem) };
        });
      } catch (e) {
        if (e instanceof AnchorFileError) return badAnchor(e);
        throw e;
      }
      const [fileBytes, certificateBytes] = await Promise.all([readBlob(file), readBlob(certificate)]);
      return checkAgainstCertificate(fileBytes, certificateBytes, endpoints, {
        anchors,
        at,
      });
    },
  };
}
