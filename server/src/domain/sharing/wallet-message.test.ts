import { randomUUID } from 'node:crypto';
import { isAppError } from '@notary/shared';
import { Signature, Wallet } from 'ethers';
import { SiweMessage } from 'siwe';
import { describe, expect, it } from 'vitest';
import { parseWalletAddress, verifyWalletMessage, WALLET_MESSAGE_WINDOW } from './wallet-message';

const wallet = Wallet.createRandom();
const documentId = randomUUID();
const now = new Date('2026-11-21T12:00:00.000Z');
const publicUrl = 'https://notary.example:3000';
const domain = 'notary.example:3000';

const at = (seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

/** A SIWE message as a client builds it with the `siwe` package; `fields` override the defaults. */
function siwe(fields: Partial<SiweMessage> = {}): string {
  return new SiweMessage({
    domain,
    address: wallet.address,
    statement: `Open document ${documentId} on Notary.`,
    uri: `${publicUrl}/access/wallet/${documentId}`,
    version: '1',
    chainId: 1,
    nonce: 'n0nce1234567',
    issuedAt: at(0),
    ...fields,
  }).prepareMessage();
}

async function check(message: string, signer = wallet, address = wallet.address) {
  const signature = await signer.signMessage(message);
  return verifyWalletMessage({ address, signature, message, documentId, service: { publicUrl }, now });
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

describe('wallet access messages (Sign-In With Ethereum for this service)', () => {
  it('accepts Issued At within 10 minutes back and 1 minute ahead, to the second', async () => {
    const { maxAgeSeconds, maxFutureSeconds } = WALLET_MESSAGE_WINDOW;
    expect([maxAgeSeconds, maxFutureSeconds]).toEqual([600, 60]);
    for (const offset of [-600, -1, 0, 60]) {
      const ok = await check(siwe({ issuedAt: at(offset) }));
      expect(ok.address).toBe(wallet.address);
      expect(ok.rememberUntil.getTime()).toBe(now.getTime() + (offset + 660) * 1000);
    }
    expect(await failure(check(siwe({ issuedAt: at(-601) })))).toMatch(/^UNAUTHENTICATED: .*older/);
    expect(await failure(check(siwe({ issuedAt: at(61) })))).toMatch(/^UNAUTHENTICATED: .*future/);
  });

  it('the document id may be in the statement, the URI or a resource; elsewhere or nowhere: 401', async () => {
    const base = { statement: 'Open a document on Notary.', uri: `${publicUrl}/access/wallet` };
    expect((await check(siwe({ ...base, resources: [`urn:uuid:${documentId}`] }))).address).toBe(
      wallet.address,
    );
    expect((await check(siwe({ ...base, uri: `${publicUrl}/access/wallet/${documentId}` }))).address).toBe(
      wallet.address,
    );
    expect((await check(siwe({ uri: base.uri }))).address).toBe(wallet.address);
    expect(await failure(check(siwe(base)))).toMatch(/^UNAUTHENTICATED: .*document id/);
    // In the request id only: not a place that says what the signer is opening.
    expect(await failure(check(siwe({ ...base, requestId: documentId })))).toMatch(/document id/);
  });

  it('bound to this service: domain, scheme and URI origin; another site, http for https, or a foreign URI: 401', async () => {
    expect((await check(siwe({ scheme: 'https' }))).address).toBe(wallet.address);
    expect(await failure(check(siwe({ domain: 'evil.example' })))).toMatch(
      /must be for notary\.example:3000/,
    );
    expect(await failure(check(siwe({ domain: 'notary.example' })))).toMatch(/must be for/);
    expect(await failure(check(siwe({ scheme: 'http' })))).toMatch(/must be for https:\/\/notary/);
    expect(await failure(check(siwe({ uri: `https://evil.example/access/wallet/${documentId}` })))).toMatch(
      /URI must be on https:\/\/notary\.example:3000/,
    );
    expect(
      await failure(check(siwe({ uri: `http://notary.example:3000/access/wallet/${documentId}` }))),
    ).toMatch(/URI must be on/);
  });

  it('only EIP-4361 messages: free text, JSON, a broken or non-canonical SIWE message are 401', async () => {
    const plain = `I request access to document ${documentId}.\nIssued At: ${at(0)}`;
    expect(await failure(check(plain))).toMatch(/^UNAUTHENTICATED: .*Sign-In With Ethereum \(EIP-4361\)/);
    expect(await failure(check(JSON.stringify({ documentId, issuedAt: at(0) })))).toMatch(/EIP-4361/);
    // A SIWE message whose nonce is too short, or without Issued At, does not parse.
    expect(await failure(check(siwe().replace('n0nce1234567', 'abc')))).toMatch(/EIP-4361/);
    expect(await failure(check(siwe().replace(/\nIssued At: .*/, '')))).toMatch(/EIP-4361/);
    // CRLF line breaks parse but are not what the canonical form signs.
    expect(await failure(check(siwe().replaceAll('\n', '\r\n')))).toMatch(/^UNAUTHENTICATED/);
  });

  it('expiration and not-before are honored; the address line must be the claimed address', async () => {
    expect((await check(siwe({ expirationTime: at(30) }))).address).toBe(wallet.address);
    expect(await failure(check(siwe({ issuedAt: at(-10), expirationTime: at(-1) })))).toMatch(/expired/);
    expect(await failure(check(siwe({ notBefore: at(30) })))).toMatch(/not valid yet/);
    const other = Wallet.createRandom();
    expect(await failure(check(siwe({ address: other.address })))).toMatch(/another address/);
  });

  it('the signature must come from the claimed address; a malleable twin maps to the same single use', async () => {
    const message = siwe();
    const eve = Wallet.createRandom();
    expect(await failure(check(message, eve, wallet.address))).toMatch(/not made by this wallet/);
    expect(
      await failure(
        verifyWalletMessage({
          address: wallet.address,
          signature: '0x1234',
          message,
          documentId,
          service: { publicUrl },
          now,
        }),
      ),
    ).toMatch(/^UNAUTHENTICATED: Invalid signature/);
    const signature = await wallet.signMessage(message);
    const first = await verifyWalletMessage({
      address: wallet.address,
      signature,
      message,
      documentId,
      service: { publicUrl },
      now,
    });
    // (r, n - s) with the other recovery bit is the same signature for ECDSA; either it is refused or it is
    // remembered as the same use.
    const sig = Signature.from(signature);
    const n = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
    const twin = `${sig.r}${(n - BigInt(sig.s)).toString(16).padStart(64, '0')}${sig.v === 27 ? '1c' : '1b'}`;
    try {
      const again = await verifyWalletMessage({
        address: wallet.address,
        signature: twin,
        message,
        documentId,
        service: { publicUrl },
        now,
      });
      expect(again.useHash).toBe(first.useHash);
    } catch (e) {
      expect(isAppError(e)).toBe(true);
    }
  });

  it('addresses: 0x + 40 hex, and a mixed-case address must carry its EIP-55 checksum (400 before the proof)', async () => {
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
    // The address line may be checksummed while the claimed address is lower case.
    expect((await check(siwe(), wallet, wallet.address.toLowerCase())).address).toBe(wallet.address);
    expect(await failure(check('not even a message', wallet, '0x123'))).toMatch(/^BAD_REQUEST/);
  });
});
