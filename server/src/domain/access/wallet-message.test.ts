import { randomUUID } from 'node:crypto';
import { isAppError } from '@notary/shared';
import { Signature, Wallet } from 'ethers';
import { describe, expect, it } from 'vitest';
import { parseWalletAddress, verifyWalletMessage, WALLET_MESSAGE_WINDOW } from './wallet-message';

const wallet = Wallet.createRandom();
const documentId = randomUUID();
const now = new Date('2026-11-21T12:00:00.000Z');
const domain = 'notary.example:3000';

const at = (seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

async function check(message: string, signer = wallet, address = wallet.address) {
  const signature = await signer.signMessage(message);
  return verifyWalletMessage({ address, signature, message, documentId, domain, now });
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (e) {
    if (isAppError(e)) return `${e.code}: ${e.message}`;
    throw e;
  }
  throw new Error('expected a failure');
}

const siwe = (fields: Record<string, string>, header = domain, address = wallet.address) =>
  [
    `${header} wants you to sign in with your Ethereum account:`,
    address,
    '',
    `Open ${documentId}`,
    '',
    ...Object.entries(fields).map(([k, v]) => `${k}: ${v}`),
  ].join('\n');

describe('wallet access messages', () => {
  it('accepts Issued At within 10 minutes back and 1 minute ahead, to the second', async () => {
    const { maxAgeSeconds, maxFutureSeconds } = WALLET_MESSAGE_WINDOW;
    expect([maxAgeSeconds, maxFutureSeconds]).toEqual([600, 60]);
    for (const offset of [-600, -1, 0, 60]) {
      const ok = await check(`Open ${documentId}\nIssued At: ${at(offset)}`);
      expect(ok.address).toBe(wallet.address);
      expect(ok.rememberUntil.getTime()).toBe(now.getTime() + (offset + 660) * 1000);
    }
    expect(await failure(check(`Open ${documentId}\nIssued At: ${at(-601)}`))).toMatch(
      /^UNAUTHENTICATED: .*older/,
    );
    expect(await failure(check(`Open ${documentId}\nIssued At: ${at(61)}`))).toMatch(
      /^UNAUTHENTICATED: .*future/,
    );
    expect(await failure(check(`Open ${documentId}\nIssued At: yesterday`))).toMatch(/^UNAUTHENTICATED/);
    expect(await failure(check(`Open ${documentId}`))).toMatch(/must carry its time/);
    expect(await failure(check(`Open it\nIssued At: ${at(0)}`))).toMatch(/document id/);
  });

  it('SIWE: domain, address line, expiration and not-before are enforced', async () => {
    expect((await check(siwe({ 'Issued At': at(0), 'Expiration Time': at(30) }))).address).toBe(
      wallet.address,
    );
    expect(await failure(check(siwe({ 'Issued At': at(0) }, 'evil.example')))).toMatch(/must be for/);
    const other = Wallet.createRandom();
    expect(await failure(check(siwe({ 'Issued At': at(0) }, domain, other.address)))).toMatch(
      /another address/,
    );
    expect(await failure(check(siwe({ 'Issued At': at(-10), 'Expiration Time': at(-1) })))).toMatch(
      /expired/,
    );
    expect(await failure(check(siwe({ 'Issued At': at(0), 'Not Before': at(30) })))).toMatch(/not valid yet/);
    expect(await failure(check(siwe({ Nonce: 'abc' })))).toMatch(/must carry its time/);
  });

  it('the signature must come from the claimed address; a malleable twin maps to the same single use', async () => {
    const message = `Open ${documentId}\nIssued At: ${at(0)}`;
    const eve = Wallet.createRandom();
    expect(await failure(check(message, eve, wallet.address))).toMatch(/not made by this wallet/);
    const signature = await wallet.signMessage(message);
    const first = verifyWalletMessage({
      address: wallet.address,
      signature,
      message,
      documentId,
      domain,
      now,
    });
    // (r, n - s) with the other recovery bit is the same signature for ECDSA; either it is refused or it is
    // remembered as the same use.
    const sig = Signature.from(signature);
    const n = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
    const twin = `${sig.r}${(n - BigInt(sig.s)).toString(16).padStart(64, '0')}${sig.v === 27 ? '1c' : '1b'}`;
    try {
      const again = verifyWalletMessage({
        address: wallet.address,
        signature: twin,
        message,
        documentId,
        domain,
        now,
      });
      expect(again.useHash).toBe(first.useHash);
    } catch (e) {
      expect(isAppError(e)).toBe(true);
    }
  });

  it('addresses: 0x + 40 hex, and a mixed-case address must carry its EIP-55 checksum', () => {
    expect(parseWalletAddress(wallet.address.toLowerCase())).toBe(wallet.address);
    expect(parseWalletAddress(`0x${wallet.address.slice(2).toUpperCase()}`)).toBe(wallet.address);
    // EIP-55's own example, correct and with one letter's case flipped.
    expect(parseWalletAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toBe(
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    );
    const broken = '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    for (const bad of ['0x123', wallet.address.slice(2), `${wallet.address}0`, broken]) {
      expect(() => parseWalletAddress(bad), bad).toThrow(/Invalid wallet address/);
    }
  });
});
