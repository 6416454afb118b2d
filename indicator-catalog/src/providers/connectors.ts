import { z } from 'zod';
import { GeoIndicaRestConnector } from './geo-indica-rest';
import type { ConnectorOptions, ProviderConnector } from './port';

/**
 * Kinds of connector this catalog knows (spec, Provider registration: `kind`; the first is
 * `geo-indica-rest`). A new kind is a connector module plus one line here and one in `FACTORIES`.
 */
export const ConnectorKind = z.enum(['geo-indica-rest']);
export type ConnectorKind = z.infer<typeof ConnectorKind>;

/** Builds the connector of a provider's `kind`; typed by `ConnectorKind`, so a kind without one fails to compile. */
const FACTORIES: Record<ConnectorKind, (baseUrl: string, options: ConnectorOptions) => ProviderConnector> = {
  'geo-indica-rest': (baseUrl, options) => new GeoIndicaRestConnector(baseUrl, options),
};

/** Known connector kinds, in registration order. */
export const CONNECTOR_KINDS: readonly string[] = ConnectorKind.options;

/** @throws Error for an unknown kind (registration rejects those first). */
export function createConnector(kind: string, baseUrl: string, options: ConnectorOptions): ProviderConnector {
  const parsed = ConnectorKind.safeParse(kind);
  if (!parsed.success) throw new Error(`Unknown provider kind ${kind}`);
  return FACTORIES[parsed.data](baseUrl, options);
}
