import { readFile } from 'node:fs/promises';
import { errorMessage } from '@notary/shared';
import type { SigningConfig } from '../../config';
import type { DocumentSigner } from '../../ports/signer';
import { loadFileSigner } from './file';

/**
 * The certificate signer the configuration asks for (`SIGNING_CERT`, docs/certificates.md): a PKCS#12 file
 * (password `SIGNING_CERT_PASSWORD`), or a PEM chain with the PEM key in `SIGNING_KEY` (or in the same file).
 * @throws Error naming the file and what is wrong with it (the service does not start with a broken key).
 */
export async function createSigner(config: SigningConfig): Promise<DocumentSigner> {
  const cert = await readFile(config.certPath);
  try {
    if (cert.subarray(0, 4096).toString('latin1').includes('-----BEGIN')) {
      const chainPem = cert.toString('utf8');
      const keyPem = config.keyPath ? await readFile(config.keyPath, 'utf8') : chainPem;
      return await loadFileSigner({ keyPem, chainPem });
    }
    return await loadFileSigner({ pkcs12: cert, password: config.password ?? '' });
  } catch (e) {
    throw new Error(`SIGNING_CERT ${config.certPath}: ${errorMessage(e)}`, {
      cause: e,
    });
  }
}
