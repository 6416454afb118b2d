import { randomBytes } from 'node:crypto';

/**
 * A wallet access message (`POST /access/wallet/:documentId`; README, Sharing: wallet messages): Sign-In With
 * Ethereum (EIP-4361) for the service at `serviceUrl`, written out by hand in the canonical form (what the
 * `siwe` package's `prepareMessage()` writes), so the tests also show a client needs no library for it. By
 * default the statement and the URI `<serviceUrl>/access/wallet/<documentId>` name the document, issued now.
 * `address` must be EIP-55 checksummed (ethers `Wallet.address` is).
 */
export function walletAccessMessage(o: {
  serviceUrl: string;
  address: string;
  documentId: string;
  issuedAt?: Date;
  expirationTime?: Date;
  /** Defaults to the host (and port) of `serviceUrl`. */
  domain?: string;
  uri?: string;
  statement?: string;
  resources?: string[];
  nonce?: string;
}): string {
  const lines = [
    `${o.domain ?? new URL(o.serviceUrl).host} wants you to sign in with your Ethereum account:`,
    o.address,
    '',
    o.statement ?? `Open document ${o.documentId} on Notary.`,
    '',
    `URI: ${o.uri ?? `${o.serviceUrl}/access/wallet/${o.documentId}`}`,
    'Version: 1',
    'Chain ID: 1',
    `Nonce: ${o.nonce ?? randomBytes(8).toString('hex')}`,
    `Issued At: ${(o.issuedAt ?? new Date()).toISOString()}`,
  ];
  if (o.expirationTime) lines.push(`Expiration Time: ${o.expirationTime.toISOString()}`);
  if (o.resources?.length) lines.push('Resources:', ...o.resources.map((r) => `- ${r}`));
  return lines.join('\n');
}
