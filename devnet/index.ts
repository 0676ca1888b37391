import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { computeAddress, JsonRpcProvider, SigningKey } from 'ethers';
import { loadConfig, type Config } from '../config/config.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { startAnvil } from './anvil.ts';
import { loadDevnetArtifacts } from '../contracts/evm/artifacts.ts';
import { deployBridgeContracts, type BridgeDeployment } from './deploy.ts';
import { devnetRegistry, STELLAR_DEVNET_CHAIN_ID, withStellarDevnet, type RegistryFile } from './registry-file.ts';
import { deployStellarContracts, type StellarDeployment } from './stellar/deploy.ts';
import { startStellarNode, type StellarNode } from './stellar/node.ts';
import { rpc } from '@stellar/stellar-sdk';

export { anvilAccounts, type DevAccount } from './accounts.ts';
export { mergeRegistry, type RegistryFile } from './registry-file.ts';
export type { BridgeDeployment } from './deploy.ts';

/** The two devnet chains: ids and the ports `npm run devnet` uses (devnet/registry.json). */
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
  /**
   * Directory that keeps both chains' state and their deployments across restarts. A restart
   * reuses the deployed contracts (same addresses, balances, trees) instead of deploying anew.
   * Unset: the chains live in memory only.
   */
  stateDir?: string;
  /**
   * Also start the local Stellar network (devnet/stellar, built by `buildStellarDevnet`) with the
   * Soroban contracts trusting `relayer` (G...), registered as chain 148. Off when unset.
   */
  stellar?: { relayer: string; port?: number; ledgerMs?: number };
}

/** A running devnet. */
export interface Devnet {
  /** Registry of the two chains (chains, tokens, routes), ready for the registry import. */
  registry: RegistryFile;
  /** Per chain id: the deployed addresses. */
  deployments: Record<string, BridgeDeployment>;
  /** Per chain id: the JSON-RPC endpoint. */
  rpcUrls: Record<string, string>;
  /** The local Stellar network, when `stellar` was asked for. */
  stellar?: { node: StellarNode; deployment: StellarDeployment };
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
    options.relayerEvmAddress ?? computeAddress(new SigningKey(devnetRelayerKey(config!)).publicKey);
  const domain = options.domain ?? { name: config!.EIP712_DOMAIN_NAME, version: config!.EIP712_DOMAIN_VERSION };
  const artifacts = await loadDevnetArtifacts();
  if (options.stateDir) mkdirSync(options.stateDir, { recursive: true });
  const nodes: { stop(): Promise<void> }[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  // The contracts' code: a persisted chain deployed from other code (before a contract change, such
  // as the key rotation's new functions) is deployed again rather than reused.
  const code = createHash('sha256').update(artifacts.adManager.bytecode).update(artifacts.orderPortal.bytecode).digest('hex');
  try {
    const chains = await Promise.all(
      DEVNET_CHAINS.map(async (chain, i) => {
        const files = options.stateDir ? stateFiles(options.stateDir, chain.chainId) : undefined;
        const node = await startAnvil({ chainId: chain.chainId, port: options.ports?.[i] ?? chain.port, statePath: files?.state });
        nodes.push(node);
        const deployment =
          (files && (await previousDeployment(node.rpcUrl, files.deployment, relayer, code))) ??
          (await deployBridgeContracts({ rpcUrl: node.rpcUrl, artifacts, relayer, domain }));
        if (files) writeFileSync(files.deployment, `${JSON.stringify({ relayer, code, deployment }, null, 2)}\n`);
        return { name: chain.name, rpcUrl: node.rpcUrl, deployment };
      }),
    );
    let registry = devnetRegistry(chains);
    const rpcUrls: Record<string, string> = Object.fromEntries(chains.map((chain) => [String(chain.deployment.chainId), chain.rpcUrl]));
    let stellar: Devnet['stellar'];
    if (options.stellar) {
      stellar = await startStellarDevnet({ ...options.stellar, stateDir: options.stateDir, domain });
      nodes.push(stellar.node);
      const { rpcUrl, networkPassphrase } = stellar.node;
      registry = withStellarDevnet(registry, { rpcUrl, networkPassphrase, deployment: stellar.deployment });
      rpcUrls[STELLAR_DEVNET_CHAIN_ID] = stellar.node.rpcUrl;
    }
    return {
      registry,
      deployments: Object.fromEntries(chains.map((chain) => [String(chain.deployment.chainId), chain.deployment])),
      rpcUrls,
      stellar,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What `startStellarDevnet` needs: the relayer (G...) the contracts trust, and the EIP-712 domain they check. */
export interface StellarDevnetOptions {
  relayer: string;
  domain: { name: string; version: string };
  /** Port; 0 (default) for a free one. */
  port?: number;
  ledgerMs?: number;
  /** As for `startDevnet`: the ledger is kept in `<stateDir>/stellar` across restarts; unset, in memory only. */
  stateDir?: string;
}

/**
 * Starts the local Stellar network (devnet/stellar, built by `buildStellarDevnet`) and deploys the
 * Soroban contracts on it (found again on a kept ledger): chain 148 of the devnet, on its own, for a
 * caller that starts it after the EVM chains (`npm start` lets it join once built). A failed deploy
 * stops the node before the error propagates.
 */
export async function startStellarDevnet(options: StellarDevnetOptions): Promise<{ node: StellarNode; deployment: StellarDeployment }> {
  const node = await startStellarNode({
    port: options.port ?? 0,
    ledgerMs: options.ledgerMs,
    dataDir: options.stateDir ? path.join(options.stateDir, 'stellar') : undefined,
  });
  try {
    const deployment = await deployStellarContracts({
      server: new rpc.Server(node.rpcUrl, { allowHttp: true }),
      networkPassphrase: node.networkPassphrase,
      relayer: options.relayer,
      chainId: BigInt(STELLAR_DEVNET_CHAIN_ID),
      domain: options.domain,
    });
    return { node, deployment };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

function stateFiles(stateDir: string, chainId: number) {
  return {
    state: path.join(stateDir, `chain-${chainId}.state.json`),
    deployment: path.join(stateDir, `chain-${chainId}.deployment.json`),
  };
}

/**
 * The deployment recorded beside a persisted chain, when the chain still holds its contracts,
 * deployed from the same code (`code`, a hash of the creation bytecode) and trusting the same
 * relayer; otherwise undefined (deploy again).
 */
async function previousDeployment(rpcUrl: string, file: string, relayer: string, code: string): Promise<BridgeDeployment | undefined> {
  if (!existsSync(file)) return undefined;
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as { relayer: string; code?: string; deployment: BridgeDeployment };
  if (recorded.relayer.toLowerCase() !== relayer.toLowerCase() || recorded.code !== code) return undefined;
  const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true });
  try {
    const codes = await Promise.all([recorded.deployment.adManager, recorded.deployment.orderPortal].map((a) => provider.getCode(a)));
    return codes.every((code) => code !== '0x') ? recorded.deployment : undefined;
  } finally {
    provider.destroy();
  }
}

/** The relayer key `npm run devnet` trusts: the service's env key (an HSM's address is passed in as relayerEvmAddress). */
function devnetRelayerKey(config: Config): string {
  const key = resolveSecrets(config).relayerEvmPrivateKey;
  if (!key) throw new Error('the devnet needs the relayer\'s EVM address: with RELAYER_SIGNER=pkcs11 pass relayerEvmAddress (npm start does)');
  return key;
}
