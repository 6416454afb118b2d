/** A response body refused for its size by `readBounded`: the caller may say it in its own words. */
export class AnswerTooLarge extends Error {
  override name = 'AnswerTooLarge';
  /** The bound that was passed, in bytes. */
  readonly max: number;
  /** The `content-length` the answer declared, when that is what was refused (bytes). */
  readonly declared: number | undefined;

  constructor(message: string, max: number, declared?: number) {
    super(message);
    this.max = max;
    this.declared = declared;
  }
}

/**
 * The body of `res`, at most `max` bytes: a declared `content-length` above `max` is refused before reading,
 * and the stream is cancelled as soon as it passes `max`, so an endpoint cannot make the caller hold more. The
 * time is the request's own `AbortSignal`'s: a timeout while reading rejects with its `TimeoutError`. Used by
 * the verifier's JSON requests, RFC 6960 / RFC 5280 revocation look-ups and RFC 3161 client, and by the
 * service's revocation cache and IPFS block reads; `fetch` streams only, so it runs in browsers as in Node.
 * @throws AnswerTooLarge `the answer is larger than <max> bytes` (the rest is not read), or the stream's own
 *   error.
 */
export async function readBounded(res: Response, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new AnswerTooLarge(
      `the answer is larger than ${max} bytes (content-length ${declared})`,
      max,
      declared,
    );
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLarge(`the answer is larger than ${max} bytes`, max);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}
