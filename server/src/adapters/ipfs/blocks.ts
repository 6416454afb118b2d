import { createHash } from 'node:crypto';
import { joinSecrets, redactText, type SecretSet, secretsOfUrl } from '@notary/platform/redact';
import { AnswerTooLarge, AppError, errorMessage, readBounded } from '@notary/shared';
import type { CID } from 'multiformats/cid';
import { IDENTITY, SHA2_256 } from './cid';

/**
 * Largest block accepted, bytes: 2 MiB, the largest block Bitswap carries and what the Trustless Gateway
 * spec's clients may expect (importers cut files into 256 KiB or 1 MiB chunks). A larger answer is not a
 * block of a file any IPFS node could serve, and is cut off before it is held in memory.
 */
export const MAX_BLOCK_BYTES = 2 * 1024 * 1024;

/** A gateway's failure to give a block, in words for the client. */
class GatewayFailure extends Error {}

/** Where blocks come from and how long one request may take. */
export interface BlockSourceOptions {
  /** Trustless gateway base URLs (no trailing slash), tried in order. */
  gateways: string[];
  /** Longest one block request may take, connect to last byte, ms. */
  timeoutMs: number;
}

/**
 * Fetches blocks from trustless gateways (IPFS Trustless Gateway spec: `GET /ipfs/<cid>?format=raw`,
 * `Accept: application/vnd.ipld.raw`), each verified against its CID's multihash before it is returned, so a
 * gateway cannot substitute bytes. A gateway that fails (unreachable, timed out, non-200, a block that does
 * not verify) is passed over for the next; the one that last succeeded is tried first. Redirects are refused:
 * only the configured gateways are contacted. A gateway URL may carry a key (a pinning service's token in the
 * path, query or host): the failure message names the gateways redacted of every piece of their URLs.
 */
export class BlockSource {
  /** Index in `gateways` of the gateway that answered last. */
  private preferred = 0;
  /** What the failure message must not show: the pieces of every gateway URL (`secretsOfUrl`). */
  private readonly secrets: SecretSet;

  constructor(private readonly options: BlockSourceOptions) {
    this.secrets = joinSecrets(...options.gateways.map(secretsOfUrl));
  }

  /**
   * The block `cid` names, verified. `signal` aborts every request (then rejects with its reason).
   * @throws AppError BAD_GATEWAY when no gateway gave a block that verifies (the message names each
   *   gateway's failure, a verification failure first); BAD_REQUEST for a hash function other than
   *   sha2-256 (or identity, whose digest is the block itself).
   */
  async get(cid: CID, signal: AbortSignal): Promise<Uint8Array> {
    if (cid.multihash.code === IDENTITY) return cid.multihash.digest;
    if (cid.multihash.code !== SHA2_256) {
      throw new AppError('BAD_REQUEST', `Block ${cid} uses a hash function this service does not verify`);
    }
    const { gateways } = this.options;
    const failures: { gateway: string; message: string; verification: boolean }[] = [];
    for (let i = 0; i < gateways.length; i++) {
      const index = (this.preferred + i) % gateways.length;
      const gateway = gateways[index] as string;
      signal.throwIfAborted();
      try {
        const bytes = await this.fromGateway(gateway, cid, signal);
        const digest = createHash('sha256').update(bytes).digest();
        if (!digest.equals(cid.multihash.digest)) {
          failures.push({
            gateway,
            message: `verification failed: the block it sent for ${cid} does not hash to that CID`,
            verification: true,
          });
          continue;
        }
        this.preferred = index;
        return bytes;
      } catch (e) {
        signal.throwIfAborted();
        failures.push({ gateway, message: errorMessage(e), verification: false });
      }
    }
    // A verification failure says more than the honest gateways that did not have the block.
    failures.sort((a, b) => Number(b.verification) - Number(a.verification));
    const detail = failures.map((f) => `${f.gateway}: ${f.message}`).join('; ');
    throw new AppError(
      'BAD_GATEWAY',
      redactText(`IPFS gateway failure for block ${cid}: ${detail}`, this.secrets),
    );
  }

  /** One request to one gateway: the body, at most `MAX_BLOCK_BYTES`, within `timeoutMs`. Not verified. */
  private async fromGateway(gateway: string, cid: CID, signal: AbortSignal): Promise<Uint8Array> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    // Why a request failed, as the message to the client says it.
    const failure = (e: unknown): Error => {
      if (e instanceof GatewayFailure) return e;
      if (e instanceof AnswerTooLarge) return new GatewayFailure(`sent a block larger than ${e.max} bytes`);
      if (timeout.aborted && !signal.aborted) {
        return new GatewayFailure(`no complete answer within ${this.options.timeoutMs} ms (IPFS_TIMEOUT_MS)`);
      }
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      return new GatewayFailure(`unreachable (${errorMessage(e)}${cause})`);
    };
    try {
      const res = await fetch(`${gateway}/ipfs/${cid}?format=raw`, {
        headers: { accept: 'application/vnd.ipld.raw' },
        redirect: 'error',
        signal: AbortSignal.any([signal, timeout]),
      });
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        throw new GatewayFailure(`answered HTTP ${res.status}`);
      }
      return await readBounded(res, MAX_BLOCK_BYTES);
    } catch (e) {
      throw failure(e);
    }
  }
}
