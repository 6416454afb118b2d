import { AppError } from '@notary/shared';
import { getAddress, verifyMessage } from 'ethers';
import { sha256Hex } from './tokens';

/**
 * The freshness window of a wallet access message (README, Sharing: wallet access). A message is accepted
 * while its `Issued At` is at most `maxAgeSeconds` in the past and at most `maxFutureSeconds` in the future
 * (clock skew of the signer), and only once: its use is remembered until it has aged out of the window.
 */
export const WALLET_MESSAGE_WINDOW = { maxAgeSeconds: 600, maxFutureSeconds: 60 } as const;

const SIWE_HEADER = /^(\S+) wants you to sign in with your Ethereum account:$/;
const ISO_INSTANT = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})`;

const unauthorized = (message: string) => new AppError('UNAUTHENTICATED', message);

/**
 * The claimed wallet address in EIP-55 checksum form.
 * @throws AppError BAD_REQUEST (spec: "400 invalid address") unless `0x` + 40 hex digits, all lower case, all
 *   upper case, or mixed case with a correct EIP-55 checksum.
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

/** The value of the first `<name>: <value>` line of `message` (SIWE field syntax), trimmed. */
function field(lines: readonly string[], name: string): string | undefined {
  const prefix = `${name}:`;
  const line = lines.find((l) => l.startsWith(prefix));
  return line?.slice(prefix.length).trim();
}

function instant(value: string | undefined, what: string): Date | undefined {
  if (value === undefined) return undefined;
  const ms = new RegExp(`^${ISO_INSTANT}$`).test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw unauthorized(`The signed message's ${what} is not an ISO 8601 instant`);
  return new Date(ms);
}

export interface VerifiedWalletMessage {
  /** EIP-55 form of the signing wallet. */
  address: string;
  /** Identifies this (wallet, message) pair for single use. */
  useHash: string;
  /** Until when the use must be remembered: after that the message is refused as stale anyway. */
  rememberUntil: Date;
}

/**
 * Checks a wallet access request (spec: `POST /access/wallet/:documentId`) cryptographically and for
 * freshness. The message must contain the document id (anywhere: statement, URI, Resources). Accepted forms:
 * - EIP-4361 (Sign-In With Ethereum): the header's domain must be the service's host (`PUBLIC_URL`), the
 *   address line the claimed address; `Issued At` is required, `Expiration Time` and `Not Before` are honored.
 * - any other text (EIP-191 `personal_sign`) containing the document id and a line `Issued At: <ISO 8601>`
 *   (or `issuedAt: <ISO 8601>`, also as a JSON member `"issuedAt": "<ISO 8601>"`).
 * The signature is an EIP-191 personal_sign signature, recovered with ethers `verifyMessage`.
 * @throws AppError UNAUTHENTICATED for a message without the document id, a signature that does not recover
 *   to the address, or a message outside its window (`WALLET_MESSAGE_WINDOW`).
 */
export function verifyWalletMessage(input: {
  address: string;
  signature: string;
  message: string;
  documentId: string;
  /** Host (and port) of `PUBLIC_URL`: SIWE messages must name it. */
  domain: string;
  now: Date;
}): VerifiedWalletMessage {
  const address = parseWalletAddress(input.address);
  const { message } = input;
  if (!message.toLowerCase().includes(input.documentId.toLowerCase())) {
    throw unauthorized('The signed message must contain the document id');
  }
  let recovered: string;
  try {
    recovered = verifyMessage(message, input.signature);
  } catch {
    throw unauthorized('Invalid signature');
  }
  if (recovered.toLowerCase() !== address.toLowerCase()) {
    throw unauthorized('Invalid signature: it was not made by this wallet');
  }

  const lines = message.split(/\r?\n/);
  let issuedAt: Date | undefined;
  let expiresAt: Date | undefined;
  let notBefore: Date | undefined;
  const siwe = SIWE_HEADER.exec(lines[0] ?? '');
  if (siwe) {
    if (siwe[1]?.toLowerCase() !== input.domain.toLowerCase()) {
      throw unauthorized(`The Sign-In With Ethereum message must be for ${input.domain}`);
    }
    if ((lines[1] ?? '').trim().toLowerCase() !== address.toLowerCase()) {
      throw unauthorized('The Sign-In With Ethereum message names another address');
    }
    issuedAt = instant(field(lines, 'Issued At'), 'Issued At');
    expiresAt = instant(field(lines, 'Expiration Time'), 'Expiration Time');
    notBefore = instant(field(lines, 'Not Before'), 'Not Before');
  } else {
    const match = new RegExp(
      `(?:^|[\\s{,])"?(?:Issued At|issuedAt)"?\\s*[:=]\\s*"?(${ISO_INSTANT})"?`,
      'm',
    ).exec(message);
    issuedAt = instant(match?.[1], 'Issued At');
  }
  if (!issuedAt) throw unauthorized('The signed message must carry its time: a line "Issued At: <ISO 8601>"');
  const now = input.now.getTime();
  const { maxAgeSeconds, maxFutureSeconds } = WALLET_MESSAGE_WINDOW;
  if (issuedAt.getTime() < now - maxAgeSeconds * 1000) {
    throw unauthorized(`The signed message is older than ${maxAgeSeconds / 60} minutes: sign a new one`);
  }
  if (issuedAt.getTime() > now + maxFutureSeconds * 1000) {
    throw unauthorized('The signed message is issued in the future: check the clock');
  }
  if (expiresAt && expiresAt.getTime() <= now) throw unauthorized('The signed message has expired');
  if (notBefore && notBefore.getTime() > now) throw unauthorized('The signed message is not valid yet');
  return {
    address,
    useHash: sha256Hex(`wallet-access\0${address.toLowerCase()}\0${message}`),
    rememberUntil: new Date(issuedAt.getTime() + (maxAgeSeconds + maxFutureSeconds) * 1000),
  };
}
