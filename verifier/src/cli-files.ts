/**
 * What both command lines (`cli.ts` for receipts and certificates, `wacz-cli.ts` for web archives) read from
 * files: the input's bytes and the trust anchors. Node only.
 */
import { readFile } from 'node:fs/promises';
import { pemCertificates } from '@notary/trust/bytes';
import { errorMessage } from './error-message.ts';
import { ICP_BRASIL_ROOTS_PEM } from './icp-brasil-roots.ts';

/**
 * The bytes of the file at `path`.
 * @throws Error `cannot read <path>: <errno code or message>`.
 */
export async function readCliFile(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
  }
}

/** The file at `path` as UTF-8 text. @throws as `readCliFile`. */
export async function readCliText(path: string): Promise<string> {
  return new TextDecoder().decode(await readCliFile(path));
}

/**
 * The DER trust anchors the options name: the PEM certificates of `--trust-ca` (signers' chains) and of
 * `--tsa-ca` (time-stamping authorities), each followed by the shipped ICP-Brasil roots when `--trust
 * icp-brasil` (they anchor signers and ACTs, timestamp authorities, alike: DOC-ICP-15.03 Anexo 2).
 * @throws Error when a file cannot be read; TypeError when it holds no PEM certificate.
 */
export async function trustAnchorsOf(values: {
  'trust-ca'?: string;
  'tsa-ca'?: string;
  trust?: string;
}): Promise<{ trustCa: Uint8Array[]; tsaCa: Uint8Array[] }> {
  const shipped =
    values.trust === 'icp-brasil' ? ICP_BRASIL_ROOTS_PEM.flatMap((pem) => pemCertificates(pem)) : [];
  const trustCa = [
    ...(values['trust-ca'] ? pemCertificates(await readCliText(values['trust-ca'])) : []),
    ...shipped,
  ];
  const tsaCa = [
    ...(values['tsa-ca'] ? pemCertificates(await readCliText(values['tsa-ca'])) : []),
    ...shipped,
  ];
  return { trustCa, tsaCa };
}
