import type { OnchainInfoDto } from '@notary/shared';
import type { Config } from '../../config';

/**
 * On-chain info (spec, Other shapes). Anchoring is not wired yet: both chains report `enabled: false` with
 * the networks the embedded devnet will use, so clients can already build links.
 */
export function onchainInfo(_config: Config): OnchainInfoDto {
  return {
    network: 'hardhat',
    chainId: 31337,
    enabled: false,
    explorerTxPrefix: '',
    attestationScanPrefix: '',
    stacksNetwork: 'devnet',
    stacksEnabled: false,
    stacksExplorerTxPrefix: 'https://explorer.hiro.so/txid',
  };
}
