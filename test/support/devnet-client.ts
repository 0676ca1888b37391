import { Contract, getBytes, Interface, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
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

/**
 * Why a mined transaction reverted: replays it with eth_call on the state it ran on (the block
 * before its own; anvil mines one transaction per block) with its own gas limit, and decodes the
 * custom error with `abis`; then once more with no gas limit, to tell an out-of-gas from a real revert.
 */
export async function explainRevert(provider: JsonRpcProvider, txHash: string, abis: InterfaceAbi[]): Promise<string> {
  const tx = (await provider.getTransaction(txHash))!;
  const receipt = (await provider.getTransactionReceipt(txHash))!;
  const call = { from: tx.from, to: tx.to, data: tx.data, value: tx.value, blockTag: receipt.blockNumber - 1 };
  const reason = async (gasLimit?: bigint): Promise<string> => {
    try {
      await provider.call({ ...call, ...(gasLimit === undefined ? {} : { gasLimit }) });
      return 'succeeds';
    } catch (error: any) {
      const data: string | undefined = error?.data ?? error?.info?.error?.data;
      for (const abi of abis) {
        const parsed = data ? new Interface(abi).parseError(data) : null;
        if (parsed) return `reverts with ${parsed.name}(${parsed.args.join(', ')})`;
      }
      return `fails: ${error?.info?.error?.message ?? error?.shortMessage ?? error?.message}`;
    }
  };
  const withOwnGas = await reason(tx.gasLimit);
  const needed = await provider.estimateGas(call).then((g) => g.toString(), () => 'no estimate');
  return `${withOwnGas} with its gas limit ${tx.gasLimit} (used ${receipt.gasUsed}); with no limit it ${await reason()} (estimate on that state: ${needed})`;
}

/**
 * The gas limit a dApp should send: the estimate plus 30 %. An order's deposit inserts a leaf into
 * the portal's Poseidon tree, whose storage writes depend on the leaf index (one subtree slot per
 * zero bit): estimated while another deposit is in flight, the exact estimate falls short when the
 * other lands first, and the token's transferFrom, called last with 63/64 of what is left, runs out:
 * the portal reverts with TransferFailed() (bench:trades' createOrder revert at 8 lanes, named by
 * replaying it with `explainRevert`; test/trades/trades-evm.test.ts reproduces it).
 */
export const withGasHeadroom = (estimate: bigint): bigint => (estimate * 13n) / 10n;

export interface DevnetClientOptions {
  /** Send with the bare gas estimate instead of `withGasHeadroom` (bench:trades BENCH_EXACT_GAS reproduces the old out-of-gas). */
  exactGas?: boolean;
}

export async function devnetClient(rpcUrls: Record<string, string>, deployments: Record<string, BridgeDeployment>, options: DevnetClientOptions = {}): Promise<DevnetClient> {
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
      const fn = contract(chainId, name, key).getFunction(evmCall.functionName);
      const estimate = await fn.estimateGas(...evmCall.args, { value: evmCall.value });
      const gasLimit = options.exactGas ? estimate : withGasHeadroom(estimate);
      try {
        return await mined(fn(...evmCall.args, { value: evmCall.value, gasLimit }));
      } catch (error: any) {
        const hash: string | undefined = error?.receipt?.hash;
        if (!hash) throw error;
        throw new Error(`${name}.${evmCall.functionName} ${hash} reverted: ${await explainRevert(provider(chainId), hash, Object.values(abi))}`, { cause: error });
      }
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
