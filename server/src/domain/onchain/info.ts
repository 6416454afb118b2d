import type { OnchainInfoDto } from '@notary/shared';
import type { Config, VerifyEndpoints } from '../../config';
import { DEVNET_EVM_NETWORK } from '../../ports/chains';

/**
 * On-chain info (spec, Other shapes: `GET /api/onchain/info`), from configuration only (no chain call):
 * - `ANCHORING=off`: both chains disabled; the names are the devnet's, links empty.
 * - `ANCHORING=devnet`: both enabled on `hardhat` (31337) and Stacks `devnet`; the devnets have no public
 *   explorer, so every prefix is empty (clients show the hash without a link).
 * - configured: each chain enabled when its variables are set, with its explorer prefixes (EVM
 *   `<explorerTxPrefix>/<0xhash>`, easscan `<attestationScanPrefix>/<uid>`, Stacks
 *   `<stacksExplorerTxPrefix>/0x<txid>?chain=<stacksNetwork>`).
 * `verification` lists `endpoints` where a receipt can be checked without this service (the configured public ones,
 * plus the devnets' when they run; none when not given, e.g. for the certificate's and the receipt's own use).
 */
export function onchainInfo(
  config: Pick<Config, 'anchoring'>,
  endpoints: VerifyEndpoints = { evmRpcUrls: [], stacksApiUrls: [] },
): OnchainInfoDto {
  const verification = { evmRpcUrls: [...endpoints.evmRpcUrls], stacksApiUrls: [...endpoints.stacksApiUrls] };
  const a = config.anchoring;
  if (a.mode !== 'configured') {
    const on = a.mode === 'devnet';
    return {
      ...DEVNET_EVM_NETWORK,
      enabled: on,
      explorerTxPrefix: '',
      attestationScanPrefix: '',
      stacksNetwork: 'devnet',
      stacksEnabled: on,
      stacksExplorerTxPrefix: '',
      verification,
    };
  }
  return {
    network: a.evm?.network ?? DEVNET_EVM_NETWORK.network,
    chainId: a.evm?.chainId ?? DEVNET_EVM_NETWORK.chainId,
    enabled: a.evm !== undefined,
    explorerTxPrefix: a.evm?.explorerTxPrefix ?? '',
    attestationScanPrefix: a.evm?.attestationScanPrefix ?? '',
    stacksNetwork: a.stacks?.network ?? 'devnet',
    stacksEnabled: a.stacks !== undefined,
    stacksExplorerTxPrefix: a.stacks?.explorerTxPrefix ?? '',
    verification,
  };
}
