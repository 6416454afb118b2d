import { GeoIndicaRestConnector } from './geo-indica-rest';
import type { ConnectorOptions, ProviderConnector } from './port';

export { ConnectorKind } from './geo-indica-rest';

/** Builds the connector of a provider's `kind` (spec, Provider registration: `kind`). */
const FACTORIES: Record<string, (baseUrl: string, options: ConnectorOptions) => ProviderConnector> = {
  'geo-indica-rest': (baseUrl, options) => new GeoIndicaRestConnector(baseUrl, options),
};

/** Known connector kinds, in registration order. */
export const CONNECTOR_KINDS = Object.keys(FACTORIES);

/** @throws Error for an unknown kind (registration rejects those first). */
export function createConnector(kind: string, baseUrl: string, options: ConnectorOptions): ProviderConnector {
  const factory = FACTORIES[kind];
  if (!factory) throw new Error(`Unknown provider kind ${kind}`);
  return factory(baseUrl, options);
}
