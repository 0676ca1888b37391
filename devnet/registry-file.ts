import { NATIVE_TOKEN_ADDRESS } from '../domain/index.ts';
import { TEST_TOKEN, type BridgeDeployment } from './deploy.ts';

/** The registry file format `npm run registry -- import FILE` reads (see the API's registry import). */
export interface RegistryFile {
  chains: RegistryChain[];
  tokens: RegistryToken[];
  routes: RegistryRoute[];
}

export interface RegistryChain {
  name: string;
  chainId: string;
  kind: 'EVM' | 'STELLAR';
  adManagerAddress: string;
  orderPortalAddress: string;
  rpcUrl?: string;
  confirmations?: number;
  networkPassphrase?: string;
  publicRpcUrl?: string;
}

export interface RegistryToken {
  chainId: string;
  symbol: string;
  name: string;
  address: string;
  decimals: number;
  kind: 'NATIVE' | 'ERC20' | 'SEP41';
  /** What the token stands for: tokens of one asset convert by their decimals (domain/route-pricing.ts). */
  asset?: string;
}

export interface RegistryRoute {
  adToken: { chainId: string; address: string };
  orderToken: { chainId: string; address: string };
  metadata?: Record<string, unknown>;
  /** Between tokens of different assets: `orderUnits` order token base units are worth `adUnits` ad token base units. */
  rate?: { orderUnits: string; adUnits: string };
}

/** One deployed devnet chain and where it listens. */
export interface DevnetChain {
  name: string;
  rpcUrl: string;
  deployment: BridgeDeployment;
}

/** Confirmations the devnet chains require. DEVNET ONLY: anvil is one node that never reorganises on
 * its own, so the including block suffices; a public EVM chain needs its real depth (e.g. 12 to 64
 * on Ethereum, or `finalized`), see devnet/README.md "Confirmations". */
export const DEVNET_CONFIRMATIONS = 1;

/**
 * The registry of a devnet: each chain with its contracts (DEVNET_CONFIRMATIONS: anvil mines each
 * transaction at once), native ETH and the test ERC-20 on each, and routes in both directions
 * between every pair of chains for each of the two tokens.
 */
export function devnetRegistry(chains: DevnetChain[]): RegistryFile {
  const registry: RegistryFile = { chains: [], tokens: [], routes: [] };
  for (const chain of chains) {
    const chainId = String(chain.deployment.chainId);
    registry.chains.push({
      name: chain.name,
      chainId,
      kind: 'EVM',
      adManagerAddress: chain.deployment.adManager,
      orderPortalAddress: chain.deployment.orderPortal,
      rpcUrl: chain.rpcUrl,
      confirmations: DEVNET_CONFIRMATIONS,
    });
    registry.tokens.push(
      { chainId, symbol: 'ETH', name: 'Ether', address: NATIVE_TOKEN_ADDRESS, decimals: 18, kind: 'NATIVE', asset: 'ETH' },
      { chainId, ...TEST_TOKEN, address: chain.deployment.testErc20, kind: 'ERC20', asset: 'USD' },
    );
  }
  for (const ad of chains) {
    for (const order of chains) {
      if (ad === order) continue;
      const adChainId = String(ad.deployment.chainId);
      const orderChainId = String(order.deployment.chainId);
      registry.routes.push(
        {
          adToken: { chainId: adChainId, address: NATIVE_TOKEN_ADDRESS },
          orderToken: { chainId: orderChainId, address: NATIVE_TOKEN_ADDRESS },
        },
        {
          adToken: { chainId: adChainId, address: ad.deployment.testErc20 },
          orderToken: { chainId: orderChainId, address: order.deployment.testErc20 },
        },
      );
    }
  }
  return registry;
}

/** DEMO rates between XLM (7 decimals) and ETH (18): 1 ETH = 10,000 XLM. An operator states a real one. */
const XLM_FOR_ETH = { orderUnits: '10000000', adUnits: '1' };
const ETH_FOR_XLM = { orderUnits: '1', adUnits: '10000000' };

/** The local Stellar network as the registry names it: the chain id the Stellar chain has in the demo registry. */
export const STELLAR_DEVNET_CHAIN_ID = '148';
/** Its name in the registry. */
export const STELLAR_DEVNET_NAME = 'Stellar Devnet';

/** The local Stellar network and what is deployed on it (devnet/stellar). */
export interface StellarDevnetChain {
  rpcUrl: string;
  networkPassphrase: string;
  deployment: { adManager: string; orderPortal: string; xlm: string; testToken: string };
}

/**
 * `registry` with the local Stellar network added: chain 148 with its AdManager and OrderPortal,
 * native XLM (its Stellar Asset Contract) and the SEP-41 test token TUSD (7 decimals), and routes
 * in both directions between it and every EVM chain of the registry: XLM for ETH, TUSD for TUSD.
 */
export function withStellarDevnet(registry: RegistryFile, stellar: StellarDevnetChain): RegistryFile {
  const chainId = STELLAR_DEVNET_CHAIN_ID;
  const evmChains = registry.chains.filter((chain) => chain.kind === 'EVM').map((chain) => chain.chainId);
  const tusdOn = (evm: string) => registry.tokens.find((token) => token.chainId === evm && token.kind === 'ERC20')?.address;
  const routes: RegistryRoute[] = [];
  for (const evm of evmChains) {
    // XLM and ETH are different assets: a stated DEMO rate, 1 ETH (10^18 wei) = 10,000 XLM (10^11 stroops).
    // TUSD is one asset on both sides (6 and 7 decimals): priced by its decimals.
    const pairs: [string, string | undefined, RegistryRoute['rate'], RegistryRoute['rate']][] = [
      [stellar.deployment.xlm, NATIVE_TOKEN_ADDRESS, XLM_FOR_ETH, ETH_FOR_XLM],
      [stellar.deployment.testToken, tusdOn(evm), undefined, undefined],
    ];
    for (const [stellarToken, evmToken, stellarAdRate, evmAdRate] of pairs) {
      if (!evmToken) continue;
      routes.push(
        { adToken: { chainId, address: stellarToken }, orderToken: { chainId: evm, address: evmToken }, ...(stellarAdRate ? { rate: stellarAdRate } : {}) },
        { adToken: { chainId: evm, address: evmToken }, orderToken: { chainId, address: stellarToken }, ...(evmAdRate ? { rate: evmAdRate } : {}) },
      );
    }
  }
  return {
    chains: [...registry.chains, {
      name: STELLAR_DEVNET_NAME, chainId, kind: 'STELLAR',
      adManagerAddress: stellar.deployment.adManager, orderPortalAddress: stellar.deployment.orderPortal,
      rpcUrl: stellar.rpcUrl, networkPassphrase: stellar.networkPassphrase,
      // The local network's RPC is the one a local dApp uses too: published as it is.
      publicRpcUrl: stellar.rpcUrl,
      // One validator closing final ledgers: the including ledger suffices (as on the public network).
      confirmations: 1,
    }],
    tokens: [
      ...registry.tokens,
      { chainId, symbol: 'XLM', name: 'Stellar Lumens', address: stellar.deployment.xlm, decimals: 7, kind: 'NATIVE', asset: 'XLM' },
      { chainId, symbol: 'TUSD', name: 'Test USD', address: stellar.deployment.testToken, decimals: 7, kind: 'SEP41', asset: 'USD' },
    ],
    routes: [...registry.routes, ...routes],
  };
}

/**
 * `existing` with the devnet's chains, tokens and routes replaced by `devnet`'s and everything
 * else (the Stellar chain, its tokens and routes) kept in place, so regenerating the devnet part
 * never drops entries other people maintain.
 */
export function mergeRegistry(existing: RegistryFile, devnet: RegistryFile): RegistryFile {
  const devnetIds = new Set(devnet.chains.map((chain) => chain.chainId));
  const touchesDevnet = (route: RegistryRoute) =>
    devnetIds.has(route.adToken.chainId) && devnetIds.has(route.orderToken.chainId);
  const keptChains = existing.chains.filter((chain) => !devnetIds.has(chain.chainId));
  return {
    ...existing,
    chains: [...devnet.chains, ...keptChains],
    tokens: [...devnet.tokens, ...existing.tokens.filter((token) => !devnetIds.has(token.chainId))],
    routes: [...devnet.routes, ...existing.routes.filter((route) => !touchesDevnet(route))],
  };
}
