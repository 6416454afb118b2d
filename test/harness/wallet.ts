import { randomBytes } from 'node:crypto';

/**
 * A wallet access message (`POST /access/wallet/:documentId`; docs/sharing.md, Wallet messages): Sign-In With
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

/** What one wallet sign-in step answered: status, the `Retry-After` header and the JSON body. */
export interface SignInStep {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

/**
 * Signs in with Ethereum over HTTP as a wallet app does (`POST /api/auth/siwe/nonce`, then
 * `POST /api/auth/siwe/verify` with the EIP-4361 message for `serviceUrl` signed by `wallet`), sending
 * `headers` on both (e.g. `X-Forwarded-For` to pose as a client IP). Stops after the nonce when it is refused.
 * @returns the nonce step and, when a nonce came, the verify step (its body holds `token` and `user`).
 */
export async function signInWithEthereum(
  serviceUrl: string,
  wallet: { address: string; signMessage(message: string): Promise<string> },
  headers: Record<string, string> = {},
): Promise<{ nonce: SignInStep; verify: SignInStep | undefined }> {
  const post = async (route: string, body: unknown): Promise<SignInStep> => {
    const res = await fetch(`${serviceUrl}/api/auth${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
    };
  };
  const nonce = await post('/siwe/nonce', {});
  if (nonce.status !== 200) return { nonce, verify: undefined };
  const message = walletAccessMessage({
    serviceUrl,
    address: wallet.address,
    documentId: '',
    statement: 'Sign in to Notary.',
    uri: serviceUrl,
    nonce: String(nonce.body.nonce),
  });
  const verify = await post('/siwe/verify', { message, signature: await wallet.signMessage(message) });
  return { nonce, verify };
}
