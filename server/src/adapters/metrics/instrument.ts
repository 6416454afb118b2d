import { AppError } from '@notary/shared';
import type { WebCapturer } from '../../ports/capture';
import type { IpfsGateways } from '../../ports/ipfs';
import type { RevocationSource } from '../../ports/revocation';
import type { TimestampAuthority } from '../../ports/tsa';
import type { Outcome, ServiceMetrics } from './registry';

/**
 * The ports the service calls outside services through, wrapped so that each call is counted by outcome and
 * timed in the service's metrics (`notary_dependency_requests_total`, `notary_captures_total`, ...): the domain
 * keeps calling its ports and never learns of Prometheus.
 */

/** How a failed call is named in the metrics: the service's error code in lower case, else `error`. */
export function failureOutcome(err: unknown): Outcome {
  return err instanceof AppError ? err.code.toLowerCase() : 'error';
}

/** Seconds since `start` (a `performance.now()` reading). */
function since(start: number): number {
  return (performance.now() - start) / 1000;
}

/** Runs `call`, reporting how it ended and how long it took to `observe`; its result or error unchanged. */
async function timed<T>(
  call: () => Promise<T>,
  outcomeOf: (value: T) => Outcome,
  observe: (outcome: Outcome, seconds: number) => void,
): Promise<T> {
  const start = performance.now();
  try {
    const value = await call();
    observe(outcomeOf(value), since(start));
    return value;
  } catch (err) {
    observe(failureOutcome(err), since(start));
    throw err;
  }
}

/** `tsa` with each token request counted (`dependency="tsa"`): `ok`, or the AppError code it failed with. */
export function instrumentTsa(tsa: TimestampAuthority, metrics: ServiceMetrics): TimestampAuthority {
  return {
    ...(tsa.trustAnchors ? { trustAnchors: tsa.trustAnchors } : {}),
    timestamp: (digest) =>
      timed(
        () => tsa.timestamp(digest),
        () => 'ok',
        (o, s) => metrics.observeDependency('tsa', o, s),
      ),
  };
}

/**
 * `source` with each gathering counted (`dependency="revocation"`): `ok` when every certificate got an OCSP
 * answer or a CRL, `incomplete` when some did not (the responders failed or were not reached).
 */
export function instrumentRevocation(source: RevocationSource, metrics: ServiceMetrics): RevocationSource {
  return {
    gather: (chain) =>
      timed(
        () => source.gather(chain),
        (r) => (r.missing.length === 0 ? 'ok' : 'incomplete'),
        (o, s) => metrics.observeDependency('revocation', o, s),
      ),
    // Fetching issuers is counted with the gathering that follows it for the same chain.
    withIssuers: (chain) => source.withIssuers(chain),
  };
}

/**
 * `gateways` with each file read counted (`dependency="ipfs"`) until its root block is fetched and verified (the
 * rest of the file streams later, its failures reaching the importer).
 */
export function instrumentIpfs(gateways: IpfsGateways, metrics: ServiceMetrics): IpfsGateways {
  return {
    parseCid: (text) => gateways.parseCid(text),
    fetchFile: (cid, options) =>
      timed(
        () => gateways.fetchFile(cid, options),
        () => 'ok',
        (o, s) => metrics.observeDependency('ipfs', o, s),
      ),
    queues: gateways.queues,
    publicUrl: (cid, options) => gateways.publicUrl(cid, options),
  };
}

/** `capturer` with each capture counted (`notary_captures_total`): `ok`, `gateway_timeout`, `bad_gateway`, ... */
export function instrumentCapturer(capturer: WebCapturer, metrics: ServiceMetrics): WebCapturer {
  return {
    capture: (url, options) =>
      timed(
        () => capturer.capture(url, options),
        () => 'ok',
        (o, s) => metrics.observeCapture(o, s),
      ),
  };
}
