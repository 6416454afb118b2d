/**
 * Sign-In With Ethereum (EIP-4361 message signed with `personal_sign`, EIP-191): better-auth's `siwe` plugin
 * with single-use 32-character nonces, and a verification that re-reads the signed text (domain, version,
 * chain id, nonce, address) before recovering the signer. Contract wallets (EIP-1271) are not supported.
 * ```
 * POST /api/auth/siwe/nonce    -> {"nonce":"<32 alphanumerics>"}
 * POST /api/auth/siwe/verify   {"message":"<EIP-4361 message>","signature":"0x<65 bytes hex>"}
 * ```
 */
import { generateRandomString } from 'better-auth/crypto';
import { siwe } from 'better-auth/plugins';
import { getAddress, verifyMessage } from 'ethers';

/** The SIWE fields this adapter re-checks (EIP-4361 section "Message Format"). */
function readSiweMessage(message: string): {
  domain: string | undefined;
  address: string | undefined;
  version: string | undefined;
  chainId: number | undefined;
  nonce: string | undefined;
} {
  const lines = message.split('\n').map((l) => l.replace(/\r$/, ''));
  const header =
    /^(?:[a-zA-Z][a-zA-Z0-9+.-]*:\/\/)?(\S+) wants you to sign in with your Ethereum account:$/.exec(
      lines[0] ?? '',
    );
  const field = (name: string): string | undefined => {
    const prefix = `${name}: `;
    return lines.find((l) => l.startsWith(prefix))?.slice(prefix.length);
  };
  const chainId = field('Chain ID');
  return {
    domain: header?.[1],
    address: lines[1]?.trim(),
    version: field('Version'),
    chainId: chainId !== undefined && /^\d+$/.test(chainId) ? Number(chainId) : undefined,
    nonce: field('Nonce'),
  };
}

/**
 * The `siwe` plugin for messages naming `siweDomain` (RFC 3986 authority, lower-case), on any positive chain
 * id or only on `chainIds` when given.
 */
export function siwePlugin(siweDomain: string, chainIds: readonly number[] | undefined) {
  return siwe({
    domain: siweDomain,
    anonymous: true,
    // EIP-4361: at least 8 alphanumeric characters; better-auth stores it and consumes it once.
    getNonce: async () => generateRandomString(32, 'a-z', 'A-Z', '0-9'),
    async verifyMessage({ message, signature, address, chainId, cacao }) {
      // better-auth already consumed the nonce (single use) and matched domain, expiry and chain id > 0;
      // re-check them against the signed text, then prove the signature (EIP-191 personal_sign) recovers
      // the claimed address. Contract wallets (EIP-1271) would need a chain RPC: not supported.
      const fields = readSiweMessage(message);
      if (fields.domain?.toLowerCase() !== siweDomain) return false;
      if (fields.version !== '1' || fields.chainId !== chainId) return false;
      if (!fields.nonce || fields.nonce !== cacao?.p.nonce) return false;
      if (chainIds && !chainIds.includes(chainId)) return false;
      try {
        if (getAddress(fields.address ?? '') !== getAddress(address)) return false;
        return getAddress(verifyMessage(message, signature)) === getAddress(address);
      } catch {
        return false; // malformed address or signature
      }
    },
  });
}
