import { sha256HexSync } from '@notary/platform/sha256';
import { AppError, errorMessage } from '@notary/shared';
import { getAddress, Signature, verifyMessage } from 'ethers';
import { SiweErrorType, SiweMessage } from 'siwe';

/**
 * The freshness window of a wallet access message (docs/sharing.md, Wallet messages). A message is accepted
 * while its `Issued At` is at most `maxAgeSeconds` in the past and at most `maxFutureSeconds` in the future
 * (clock skew of the signer), and only once: its use is remembered until it has aged out of the window.
 */
export const WALLET_MESSAGE_WINDOW = { maxAgeSeconds: 600, maxFutureSeconds: 60 } as const;

const unauthorized = (message: string) => new AppError('UNAUTHENTICATED', message);

/**
 * The claimed wallet address in EIP-55 checksum form.
 * @throws AppError BAD_REQUEST (spec, Public, no credentials: "400 invalid address") unless `0x` + 40 hex
 * digits, all lower case, all   upper case, or mixed case with a correct EIP-55 checksum.
 */
export function parseWalletAddress(address: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) {
    throw new AppError('BAD_REQUEST', 'Invalid wallet address: expected 0x plus 40 hex digits');
  }
  try {
    return getAddress(address);
  } catch {
    throw new AppError('BAD_REQUEST', 'Invalid wallet address: wrong EIP-55 checksum');
  }
}

/** This service as a Sign-In With Ethereum message must name it (from `PUBLIC_URL`). */
export interface WalletMessageService {
  /** `PUBLIC_URL`, e.g. `https://notary.example` or `http://127.0.0.1:3000`: its host (and port) is the domain. */
  publicUrl: string;
}

export interface VerifiedWalletMessage {
  /** EIP-55 form of the signing wallet. */
  address: string;
  /** Identifies this (wallet, message) pair for single use. */
  useHash: string;
  /** Until when the use must be remembered: after that the message is refused as stale anyway. */
  rememberUntil: Date;
}

/** The parsed EIP-4361 message, or 401 with the parser's first complaint. */
function parseSiwe(message: string, domain: string): SiweMessage {
  try {
    return new SiweMessage(message);
  } catch (e) {
    const why = errorMessage(e).split('\n')[0]?.slice(0, 120) ?? '';
    throw unauthorized(
      `The signed message must be a Sign-In With Ethereum (EIP-4361) message for ${domain} (${why})`,
    );
  }
}

/** True when `documentId` appears in the statement, the URI or one of the resources (case-insensitive). */
function namesDocument(siwe: SiweMessage, documentId: string): boolean {
  const id = documentId.toLowerCase();
  return [siwe.statement ?? '', siwe.uri, ...(siwe.resources ?? [])].some((field) =>
    field.toLowerCase().includes(id),
  );
}

/**
 * Checks a wallet access request (spec, Public, no credentials: `POST /access/wallet/:documentId`, "the
 * signed message must contain
 * the documentId") as a Sign-In With Ethereum message (EIP-4361) bound to this service, parsed and verified
 * with the `siwe` package:
 * - `domain` is the host (and port) of `PUBLIC_URL`; the `scheme`, when written, is its scheme; the `URI` is on
 *   its origin (e.g. `<PUBLIC_URL>/access/wallet/<documentId>`): a message signed for another site is refused;
 * - the document id appears in the statement, the URI or a resource (e.g. `urn:uuid:<documentId>`), so a
 *   signature cannot be moved to another document;
 * - the address line is the claimed `address`; the message is in the canonical form the `siwe` package writes
 *   (what was signed is what is checked);
 * - `Issued At` within `WALLET_MESSAGE_WINDOW`; `Expiration Time` and `Not Before` honored at `now`;
 * - the EIP-191 `personal_sign` signature recovers to `address` (ethers `verifyMessage`), and `siwe`'s own
 *   verification (signature, domain, expiry) passes. Contract wallets (EIP-1271) are not supported.
 * The SIWE `Nonce` is the signer's (8+ alphanumeric characters); single use is enforced by the caller on the
 * returned `useHash` (the whole message), so no server-issued nonce is needed.
 * @throws AppError BAD_REQUEST for a malformed address (first); UNAUTHENTICATED for anything else about the
 *   message or the signature.
 */
export async function verifyWalletMessage(input: {
  address: string;
  signature: string;
  message: string;
  documentId: string;
  service: WalletMessageService;
  now: Date;
}): Promise<VerifiedWalletMessage> {
  const address = parseWalletAddress(input.address);
  const { message } = input;
  const origin = new URL(input.service.publicUrl);
  const domain = origin.host;
  const siwe = parseSiwe(message, domain);
  if (!namesDocument(siwe, input.documentId)) {
    throw unauthorized('The signed message must contain the document id (statement, URI or resources)');
  }
  if (siwe.domain.toLowerCase() !== domain.toLowerCase()) {
    throw unauthorized(`The Sign-In With Ethereum message must be for ${domain}`);
  }
  if (siwe.scheme !== undefined && `${siwe.scheme.toLowerCase()}:` !== origin.protocol) {
    throw unauthorized(
      `The Sign-In With Ethereum message must be for ${origin.protocol.slice(0, -1)}://${domain}`,
    );
  }
  let uriOrigin: string | undefined;
  try {
    uriOrigin = new URL(siwe.uri).origin;
  } catch {
    uriOrigin = undefined;
  }
  if (uriOrigin !== origin.origin) {
    throw unauthorized(`The Sign-In With Ethereum message's URI must be on ${origin.origin}`);
  }
  if (siwe.address.toLowerCase() !== address.toLowerCase()) {
    throw unauthorized('The Sign-In With Ethereum message names another address');
  }
  if (siwe.prepareMessage() !== message) {
    throw unauthorized(
      'The Sign-In With Ethereum message is not in its canonical EIP-4361 form (line breaks \\n, fields in order)',
    );
  }

  const issuedAt = new Date(siwe.issuedAt ?? Number.NaN);
  if (Number.isNaN(issuedAt.getTime()))
    throw unauthorized('The signed message must carry its Issued At time');
  const now = input.now.getTime();
  const { maxAgeSeconds, maxFutureSeconds } = WALLET_MESSAGE_WINDOW;
  if (issuedAt.getTime() < now - maxAgeSeconds * 1000) {
    throw unauthorized(`The signed message is older than ${maxAgeSeconds / 60} minutes: sign a new one`);
  }
  if (issuedAt.getTime() > now + maxFutureSeconds * 1000) {
    throw unauthorized('The signed message is issued in the future: check the clock');
  }

  let recovered: string;
  try {
    recovered = verifyMessage(message, Signature.from(input.signature));
  } catch {
    throw unauthorized('Invalid signature');
  }
  if (recovered.toLowerCase() !== address.toLowerCase()) {
    throw unauthorized('Invalid signature: it was not made by this wallet');
  }
  const result = await siwe.verify(
    { signature: input.signature, domain: siwe.domain, time: input.now.toISOString() },
    { suppressExceptions: true },
  );
  if (!result.success) {
    const type = result.error?.type;
    if (type === SiweErrorType.EXPIRED_MESSAGE) throw unauthorized('The signed message has expired');
    if (type === SiweErrorType.NOT_YET_VALID_MESSAGE)
      throw unauthorized('The signed message is not valid yet');
    throw unauthorized(`Invalid Sign-In With Ethereum message (${type ?? 'verification failed'})`);
  }
  return {
    address,
    useHash: sha256HexSync(`wallet-access\0${address.toLowerCase()}\0${message}`),
    rememberUntil: new Date(issuedAt.getTime() + (maxAgeSeconds + maxFutureSeconds) * 1000),
  };
}
