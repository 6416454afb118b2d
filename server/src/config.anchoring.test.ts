import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { onchainInfo } from './domain/onchain/info';

/** `ANCHORING` and the chain variables (README, Configuration; docs/anchoring.md). */
describe('anchoring configuration', () => {
  const key = `0x${'11'.repeat(32)}`;

  it('defaults to the devnet, 2 s batches of at most 1000, one confirmation', () => {
    expect(loadConfig({}).anchoring).toEqual({
      mode: 'devnet',
      batchSeconds: 2,
      batchMax: 1000,
      evmConfirmations: 1,
      stacksConfirmations: 1,
    });
    expect(onchainInfo(loadConfig({}))).toMatchObject({ enabled: true, stacksEnabled: true });
    expect(onchainInfo(loadConfig({ ANCHORING: 'off' }))).toMatchObject({
      enabled: false,
      stacksEnabled: false,
    });
  });

  it('a chain variable implies configured; EVM_NETWORK presets fill in addresses and links', () => {
    const config = loadConfig({
      EVM_RPC_URL: 'https://sepolia.base.org',
      EVM_PRIVATE_KEY: key,
      EVM_NETWORK: 'base-sepolia',
    });
    expect(config.anchoring).toMatchObject({
      mode: 'configured',
      batchSeconds: 60,
      stacks: undefined,
      evm: {
        chainId: 84532,
        easAddress: '0x4200000000000000000000000000000000000021',
        schemaRegistryAddress: '0x4200000000000000000000000000000000000020',
        confirmations: 3,
      },
    });
    expect(onchainInfo(config)).toEqual({
      network: 'base-sepolia',
      chainId: 84532,
      enabled: true,
      explorerTxPrefix: 'https://sepolia.basescan.org/tx',
      attestationScanPrefix: 'https://base-sepolia.easscan.org/attestation/view',
      stacksNetwork: 'devnet',
      stacksEnabled: false,
      stacksExplorerTxPrefix: '',
      verification: { evmRpcUrls: [], stacksApiUrls: [] },
    });
  });

  it("announces the public verification endpoints given (never the service's own RPC, which may hold a key)", () => {
    const config = loadConfig({
      EVM_NETWORK: 'base-sepolia',
      EVM_RPC_URL: 'https://base-sepolia.example/v2/SECRET-KEY',
      EVM_PRIVATE_KEY: key,
      VERIFY_EVM_RPC_URLS: ' https://sepolia.base.org/ , https://base-sepolia-rpc.publicnode.com',
      VERIFY_STACKS_API_URLS: 'https://api.testnet.hiro.so/',
    });
    expect(onchainInfo(config, config.verifyEndpoints).verification).toEqual({
      evmRpcUrls: ['https://sepolia.base.org', 'https://base-sepolia-rpc.publicnode.com'],
      stacksApiUrls: ['https://api.testnet.hiro.so'],
    });
    expect(JSON.stringify(onchainInfo(config, config.verifyEndpoints))).not.toContain('SECRET-KEY');
    expect(() => loadConfig({ VERIFY_EVM_RPC_URLS: 'ftp://node.example' })).toThrow(/VERIFY_EVM_RPC_URLS/);
    expect(() => loadConfig({ VERIFY_STACKS_API_URLS: 'https://user:pw@api.example' })).toThrow(
      /VERIFY_STACKS_API_URLS/,
    );
  });

  it('Stacks alone: testnet, Hiro explorer', () => {
    const config = loadConfig({
      STACKS_API_URL: 'https://api.testnet.hiro.so',
      STACKS_PRIVATE_KEY: `${'22'.repeat(32)}01`,
      STACKS_CONTRACT_ID: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
    });
    expect(onchainInfo(config)).toMatchObject({
      enabled: false,
      stacksEnabled: true,
      stacksNetwork: 'testnet',
      stacksExplorerTxPrefix: 'https://explorer.hiro.so/txid',
    });
  });

  it('Stacks contract: any length a standard principal has, checksum verified', () => {
    const stacks = {
      STACKS_API_URL: 'https://api.testnet.hiro.so',
      STACKS_PRIVATE_KEY: `${'22'.repeat(32)}01`,
    };
    // 39 characters: a hash160 with a leading zero byte (one deployment key in about 250 gives one).
    for (const id of [
      'ST0AQAXBNENTQAXBNENTQAXBNENTQAXBNFDPVC3R.notary',
      'ST2TQAXBNENTQAXBNENTQAXBNENTQAXBNDKGVAPX.n-1',
    ]) {
      expect(loadConfig({ ...stacks, STACKS_CONTRACT_ID: id }).anchoring).toMatchObject({
        stacks: { contractId: id },
      });
    }
    // One character mistyped: the checksum no longer matches.
    for (const id of [
      'ST2TQAXBNENTQAXBNENTQAXBNENTQAXBNDKGVAPY.notary',
      'ST2TQAXBNENTQAXBNENTQAXBNENTQAXBNDKGVAPX',
      'ST2TQAXBNENTQAXBNENTQAXBNENTQAXBNDKGVAPX.1x',
    ]) {
      expect(() => loadConfig({ ...stacks, STACKS_CONTRACT_ID: id })).toThrow(/STACKS_CONTRACT_ID/);
    }
  });

  it('Stacks API kind, key and request budget: auto, none and 40 a minute unless set', () => {
    const stacks = {
      STACKS_API_URL: 'https://api.testnet.hiro.so',
      STACKS_PRIVATE_KEY: `${'22'.repeat(32)}01`,
      STACKS_CONTRACT_ID: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
    };
    expect(loadConfig(stacks).anchoring).toMatchObject({
      stacks: { apiKind: 'auto', apiKey: undefined, apiRpm: 40 },
    });
    expect(
      loadConfig({
        ...stacks,
        STACKS_API_KIND: 'node',
        STACKS_API_KEY: 'hiro-key-0123456789',
        STACKS_API_RPM: '400',
      }).anchoring,
    ).toMatchObject({ stacks: { apiKind: 'node', apiKey: 'hiro-key-0123456789', apiRpm: 400 } });
    expect(() => loadConfig({ ...stacks, STACKS_API_KIND: 'hiro-v2' })).toThrow(/STACKS_API_KIND/);
    expect(() => loadConfig({ ...stacks, STACKS_API_RPM: '0' })).toThrow(/STACKS_API_RPM/);
    // A refused key is not echoed back in the error.
    let message = '';
    try {
      loadConfig({ ...stacks, STACKS_API_KEY: 'secret-key-0123456789', STACKS_API_RPM: 'many' });
    } catch (e) {
      message = String(e);
    }
    expect(message).toMatch(/STACKS_API_RPM/);
    expect(message).not.toContain('secret-key-0123456789');
  });

  it('refuses incomplete or contradictory settings', () => {
    expect(() => loadConfig({ EVM_RPC_URL: 'http://127.0.0.1:8545', EVM_PRIVATE_KEY: key })).toThrow(
      /EVM_CHAIN_ID, EAS_ADDRESS, EAS_SCHEMA_REGISTRY_ADDRESS/,
    );
    expect(() => loadConfig({ STACKS_API_URL: 'https://api.testnet.hiro.so' })).toThrow(/STACKS_PRIVATE_KEY/);
    expect(() => loadConfig({ ANCHORING: 'configured' })).toThrow(/EVM_RPC_URL/);
    expect(() => loadConfig({ ANCHORING: 'devnet', STACKS_API_URL: 'https://api.testnet.hiro.so' })).toThrow(
      /ANCHORING=devnet/,
    );
    expect(() => loadConfig({ EVM_PRIVATE_KEY: '0x12' })).toThrow(/EVM_PRIVATE_KEY/);
  });
});
