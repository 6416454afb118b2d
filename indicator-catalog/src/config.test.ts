import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

describe('CATALOG_PROVIDER_ALLOW_HOSTS', () => {
  it('a bad CATALOG_PROVIDER_ALLOW_HOSTS stops the configuration, naming the variable', () => {
    expect(() => loadConfig({ CATALOG_PROVIDER_ALLOW_HOSTS: '127.0.0.1:3200,10.0.0.0/99' })).toThrow(
      /CATALOG_PROVIDER_ALLOW_HOSTS: "10\.0\.0\.0\/99" is not a CIDR range/,
    );
    expect(loadConfig({}).provider.allowHosts).toEqual([]);
  });
});
