import { stripHex } from '@notary/shared/hex';
import { z } from 'zod';
import { badAnswer, httpError, parseJson, StacksApiClient } from './stacks-api.ts';

/**
 * What anchoring asks of a Stacks API beyond reading (`StacksApiClient`): the sender's next nonce, the fee
 * rate and the broadcast of a signed transaction, with the reader's budget, bounds and kinds (a Hiro API
 * proxies the node's `/v2/*` routes, so nonces, fees and broadcasts work on every kind). The verifier never
 * sends: it reads through `StacksApiClient` alone.
 */

/** `POST /v2/transactions`: accepted (the txid, 64 hex) or refused (400 with the node's body). */
export type BroadcastAnswer =
  | { accepted: true; txid: string }
  | { accepted: false; status: number; body: string };

const Int = z.number().int();
const V3NoncesSchema = z.object({ next_nonce: Int });
const V1NoncesSchema = z.object({ possible_next_nonce: Int });
const AccountSchema = z.object({ nonce: Int });

/** The Stacks API client of the anchorer: the reader plus nonces, fees and broadcasts. */
export class StacksAnchoringClient extends StacksApiClient {
  /**
   * The next nonce of `address` as the endpoint sees it: with an indexer its mempool included (v3 `next_nonce`,
   * v1 `possible_next_nonce`), on a node the confirmed account nonce (`accountNonce`).
   */
  async nextNonce(address: string): Promise<bigint> {
    if ((await this.kind()) === 'node') return this.accountNonce(address);
    return this.indexed(async (kind) => {
      if (kind === 'hiro-v3') {
        const b = await this.json('GET', `/extended/v3/principals/${address}/nonces`, V3NoncesSchema);
        return BigInt(b.next_nonce);
      }
      const b = await this.json('GET', `/extended/v1/address/${address}/nonces`, V1NoncesSchema);
      return BigInt(b.possible_next_nonce);
    });
  }

  /** The confirmed nonce of `address` from the node: `GET /v2/accounts/<address>?proof=0` `nonce`. */
  async accountNonce(address: string): Promise<bigint> {
    const b = await this.json('GET', `/v2/accounts/${address}?proof=0`, AccountSchema);
    return BigInt(b.nonce);
  }

  /** `GET /v2/fees/transfer`: µSTX per byte. */
  async feeRate(): Promise<number> {
    return this.json('GET', '/v2/fees/transfer', z.number().nonnegative());
  }

  /**
   * `POST /v2/transactions` (`application/octet-stream`): 200 and the txid, or the node's refusal (400, its
   * JSON `{ error, reason, reason_data, txid }` or a text/plain message) for the caller to read.
   * @throws StacksApiUnavailable for anything else.
   */
  async broadcast(raw: Uint8Array): Promise<BroadcastAnswer> {
    const res = await this.raw('POST', '/v2/transactions', raw);
    if (res.status === 200) {
      const txid = z.string().safeParse(parseJson(res.text));
      if (!txid.success) throw badAnswer('POST /v2/transactions', res);
      return { accepted: true, txid: stripHex(txid.data) };
    }
    if (res.status === 400) return { accepted: false, status: res.status, body: res.text };
    throw httpError('POST /v2/transactions', res);
  }
}
