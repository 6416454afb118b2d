import type { RevocationConfig } from '../../config';
import type { RevocationSource } from '../../ports/revocation';
import { CachedRevocationSource } from './cached';

/**
 * Revocation data of the signing and TSA chains for PAdES B-LT/B-LTA (`REVOCATION_TIMEOUT_MS`,
 * `REVOCATION_MAX_BYTES`), fetched from the URLs the CA certificates name through the address policy
 * (`REVOCATION_ALLOW_HOSTS` for private CAs) and cached until nextUpdate.
 */
export function createRevocationSource(config: RevocationConfig): RevocationSource {
  return new CachedRevocationSource({
    timeoutMs: config.timeoutMs,
    maxBytes: config.maxBytes,
    allowHosts: config.allowHosts,
  });
}
