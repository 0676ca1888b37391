import { Contract, getBytes, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import { Web3 } from 'web3';
import { evmContractCall } from '../../chains/evm/call-args.ts';
import type { OrderParams } from '../../chains/order.ts';
import type { ActionName } from '../../chains/request-schema.ts';
import { anvilAccounts, type DevAccount } from '../../devnet/accounts.ts';
import { loadDevnetArtifacts } from '../../contracts/evm/artifacts.ts';
import type { BridgeDeployment } from '../../devnet/index.ts';

type ContractName = 'adManager' | 'orderPortal' | 'testErc20';

/**
 * What a dApp does with the API's responses on the devnet: contract calls from a wallet, token
 * approvals and balances, wallet signatures over an order hash. One per test file; `close()` it.
 */
export interface DevnetClient {
  contract(chainId: string, name: ContractName, key: string): Contract;
  /** Calls the contract a signed response names, as `evmContractCall` assembles it; resolves to the mined tx hash. */
  send(chainId: string, name: 'adManager' | 'orderPortal', key: string, action: ActionName, signed: any, extras?: { orderParams?: OrderParams; proof?: string }): Promise<string>;
  approve(chainId: string, key: string, spender: 'adManager' | 'orderPortal', amount: bigint): Promise<void>;
  balanceOf(chainId: string, address: string): Promise<bigint>;
  provider(chainId: string): JsonRpcProvider;
  close(): void;
}

/** EIP-191 signature of the 32 bytes of an order hash, as a wallet's personal_sign makes it. */
/** The devnet's ad chain (B) and order chain (A), by public chain id. */
export const AD_CHAIN = '31338';
export const ORDER_CHAIN = '31337';

/** The anvil accounts the whole-trade tests play the Maker and the Bridger with: keys and web3 accounts. */
export function tradeParties() {
  const web3 = new Web3();
  const [, makerKey, bridgerKey] = anvilAccounts(3) as [DevAccount, DevAccount, DevAccount];
  return {
    makerKey, bridgerKey,
    maker: web3.eth.accounts.privateKeyToAccount(makerKey.privateKey),
    bridger: web3.eth.accounts.privateKeyToAccount(bridgerKey.privateKey),
  };
}

export const signOrderHash = (key: string, orderHash: string): string => new Wallet(key).signMessageSync(getBytes(orderHash));

export async function mined(tx: Promise<{ wait(): Promise<unknown>; hash: string }>): Promise<string> {
  const sent = await tx;
  await sent.wait();
  return sent.hash;
}

export async function devnetClient(rpcUrls: Record<string, string>, deployments: Record<string, BridgeDeployment>): Promise<DevnetClient> {
  const artifacts = await loadDevnetArtifacts();
  const abi: Record<ContractName, InterfaceAbi> = {
    adManager: artifacts.adManager.abi as InterfaceAbi,
    orderPortal: artifacts.orderPortal.abi as InterfaceAbi,
    testErc20: artifacts.testErc20.abi as InterfaceAbi,
  };
  const providers = new Map<string, JsonRpcProvider>();
  const provider = (chainId: string) => {
    let p = providers.get(chainId);
    if (!p) providers.set(chainId, (p = new JsonRpcProvider(rpcUrls[chainId], undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 })));
    return p;
  };
  const contract = (chainId: string, name: ContractName, key: string) =>
    new Contract(deployments[chainId]![name], abi[name], new Wallet(key, provider(chainId)));
  return {
    contract,
    provider,
    async send(chainId, name, key, action, signed, extras = {}) {
      const evmCall = evmContractCall(action, signed, { ...extras, adToken: deployments[chainId]!.testErc20 });
      return mined(contract(chainId, name, key).getFunction(evmCall.functionName)(...evmCall.args, { value: evmCall.value }));
    },
    async approve(chainId, key, spender, amount) {
      await mined(contract(chainId, 'testErc20', key).getFunction('approve')(deployments[chainId]![spender], amount));
    },
    async balanceOf(chainId, address) {
      return new Contract(deployments[chainId]!.testErc20, abi.testErc20, provider(chainId)).getFunction('balanceOf')(address);
    },
    close() {
      for (const p of providers.values()) p.destroy();
    },
  };
}

/** Polls `probe` until `ok` holds, or throws saying what it last saw. */
export async function eventually<T>(what: string, probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > until) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
