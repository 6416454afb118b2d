import { redactError, redactText, type SecretSet, secretsOfUrl } from '@notary/platform/redact';

/**
 * A configured chain endpoint (`EVM_RPC_URL`, `STACKS_API_URL`) as the adapters call it. Providers put API keys
 * into these URLs (path, query or `user:pass@`), so everything an adapter lets out of itself (a thrown error,
 * a refusal's reason that ends in `anchor_tx.last_error` and the logs) goes through `redact`, which knows this
 * URL's own secrets (`secretsOfUrl`: every path segment, parameter value, userinfo part and account host label)
 * besides the generic URL redaction of `@notary/platform/redact`.
 *
 * Node's `fetch` refuses a URL with credentials (and names the whole URL in its error), so `fetchUrl` is the
 * URL without them and `headers` carries them as HTTP Basic authentication (RFC 7617), the way ethers sends
 * the same URL's credentials for its own calls.
 */
export class ChainEndpoint {
  /** The URL without its userinfo: what `fetch` is given. */
  readonly fetchUrl: string;
  /** `Authorization: Basic …` when the configured URL carries credentials, else empty. */
  readonly headers: Readonly<Record<string, string>>;
  /** What this endpoint's messages must not show (`secretsOfUrl`). */
  readonly secrets: SecretSet;
  /** The URL as configured, credentials included. */
  readonly url: string;

  constructor(url: string) {
    this.url = url;
    this.secrets = secretsOfUrl(url);
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (parsed && (parsed.username !== '' || parsed.password !== '')) {
      const user = decodeURIComponent(parsed.username);
      const pass = decodeURIComponent(parsed.password);
      this.headers = { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
      parsed.username = '';
      parsed.password = '';
      this.fetchUrl = parsed.toString();
    } else {
      this.headers = {};
      this.fetchUrl = url;
    }
  }

  /** `text` without this endpoint's secrets nor those of any URL in it (`redactText`). */
  redact(text: string): string {
    return redactText(text, this.secrets);
  }

  /**
   * Runs `call`; a rejection is replaced by its redacted copy (`redactError`: name, message, stack, code and
   * cause, nothing else: ethers attaches the request and `info.requestUrl`).
   */
  async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw redactError(e, this.secrets);
    }
  }
}
