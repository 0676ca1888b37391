import { computeAddress, SigningKey } from 'ethers';
import { loadConfig } from '../../config.ts';
import { resolveSecrets } from '../../secrets.ts';
import { startAnvil, type AnvilInstance } from '../../test/support/anvil.ts';
import { loadDevnetArtifacts } from './artifacts.ts';
import { deployBridgeContracts, type BridgeDeployment } from './deploy.ts';
import { devnetRegistry, type RegistryFile } from './registry.ts';

export { anvilAccounts, type DevAccount } from './accounts.ts';
export { mergeRegistry, type RegistryFile } from './registry.ts';
export type { BridgeDeployment } from './deploy.ts';

/** The two devnet chains: ids and the ports `npm run devnet` uses (deploy/devnet/registry.json). */
export const DEVNET_CHAINS = [
  { name: 'Devnet A', chainId: 31337, port: 8545 },
  { name: 'Devnet B', chainId: 31338, port: 8546 },
] as const;

export interface StartDevnetOptions {
  /** Ports of chain A and chain B; 8545 and 8546 by default, 0 for free ports (tests). */
  ports?: [number, number];
  /** EVM address the contracts accept signatures from; by default the relayer key `resolveSecrets(loadConfig())` yields. */
  relayerEvmAddress?: string;
  /** EIP-712 domain name and version; by default config EIP712_DOMAIN_NAME / EIP712_DOMAIN_VERSION. */
  domain?: { name: string; version: string };
}

/** A running devnet. */
export interface Devnet {
  /** Registry of the two chains (chains, tokens, routes), ready for the registry import. */
  registry: RegistryFile;
  /** Per chain id: the deployed addresses. */
  deployments: Record<string, BridgeDeployment>;
  /** Per chain id: the JSON-RPC endpoint. */
  rpcUrls: Record<string, string>;
  /** Stops both anvil nodes; the chains' state is gone afterwards. */
  stop(): Promise<void>;
}

/**
 * Starts two anvil chains (31337, 31338), deploys the bridge contracts on both from anvil's
 * account 0 in a fixed order (same addresses on both and on every run) and returns the registry.
 * On any failure the nodes already started are stopped before the error propagates.
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<Devnet> {
  const config = options.relayerEvmAddress && options.domain ? undefined : loadConfig();
  const relayer =
    options.relayerEvmAddress ?? computeAddress(new SigningKey(resolveSecrets(config!).relayerEvmPrivateKey).publicKey);
  const domain = options.domain ?? { name: config!.EIP712_DOMAIN_NAME, version: config!.EIP712_DOMAIN_VERSION };
  const artifacts = await loadDevnetArtifacts();
  const nodes: AnvilInstance[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    const chains = await Promise.all(
      DEVNET_CHAINS.map(async (chain, i) => {
        const node = await startAnvil({ chainId: chain.chainId, port: options.ports?.[i] ?? chain.port });
        nodes.push(node);
        const deployment = await deployBridgeContracts({ rpcUrl: node.rpcUrl, artifacts, relayer, domain });
        return { name: chain.name, rpcUrl: node.rpcUrl, deployment };
      }),
    );
    return {
      registry: devnetRegistry(chains),
      deployments: Object.fromEntries(chains.map((chain) => [String(chain.deployment.chainId), chain.deployment])),
      rpcUrls: Object.fromEntries(chains.map((chain) => [String(chain.deployment.chainId), chain.rpcUrl])),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
