import { Interface } from 'ethers';
import type { Web3 } from 'web3';
import { BRIDGE_INTERFACE, type BridgeEventName } from './abi.ts';
import { RpcUnavailableError } from '../errors.ts';
import { rpcCall } from './rpc.ts';

/**
 * The views of AdManager and OrderPortal (contracts/evm/src) the service reads to ask the chain
 * what happened when no client reported it: a spent authToken, an ad's balances, an order's state.
 */
const STATE_INTERFACE = new Interface([
  'function authTokenUsed(bytes32 authToken) view returns (bool)',
  'function nullifierSpent(uint256 nullifierHash) view returns (bool)',
  'function ads(bytes32 adId) view returns (address creator, address token, uint256 orderChainId, bytes32 ' +
    'adRecipient, uint256 available, uint256 locked, bool closed)',
  'function orders(bytes32 orderHash) view returns (uint8)',
]);

/** An ad as the AdManager holds it; `exists` is false for an id never created. */
export interface EvmAdState {
  exists: boolean;
  available: bigint;
  locked: bigint;
  closed: boolean;
}

async function view(web3: Web3, contract: string, name: string, args: unknown[]): Promise<ReturnType<Interface['decodeFunctionResult']>> {
  const data = STATE_INTERFACE.encodeFunctionData(name, args);
  const result = await rpcCall(`eth_call ${name}`, () =>
    web3.requestManager.send({ method: 'eth_call', params: [{ to: contract, data }, 'latest'] }),
  );
  return STATE_INTERFACE.decodeFunctionResult(name, String(result));
}

/** Whether the contract has consumed the relayer request with this authToken. Throws `RpcUnavailableError`. */
export async function evmAuthTokenSpent(web3: Web3, contract: string, authToken: string): Promise<boolean> {
  return Boolean((await view(web3, contract, 'authTokenUsed', [authToken]))[0]);
}

/** Whether a proof's nullifier was spent on this contract. Throws `RpcUnavailableError`. */
export async function evmNullifierSpent(web3: Web3, contract: string, nullifierHash: bigint): Promise<boolean> {
  return Boolean((await view(web3, contract, 'nullifierSpent', [nullifierHash]))[0]);
}

/** The AdManager's record of an ad (adId as bytes32). Throws `RpcUnavailableError`. */
export async function evmAdState(web3: Web3, adManager: string, adId: string): Promise<EvmAdState> {
  const result = await view(web3, adManager, 'ads', [adId]);
  const creator = String(result[0]);
  return { exists: !/^0x0{40}$/i.test(creator), available: BigInt(result[4]), locked: BigInt(result[5]), closed: Boolean(result[6]) };
}

/**
 * An order's state number on the contract: AdManager 0 None, 1 Locked, 2 Unlocked, 3 Released;
 * OrderPortal 0 None, 1 Deposited, 2 Unlocked, 3 Refunded. Throws `RpcUnavailableError`.
 */
export async function evmOrderState(web3: Web3, contract: string, orderHash: string): Promise<number> {
  return Number((await view(web3, contract, 'orders', [orderHash]))[0]);
}

/**
 * The timestamp (unix seconds) of the newest block `confirmations` deep (1: the latest): the time the
 * chain's contracts have finally seen. Every block still to come, or to replace a block not that
 * deep, is stamped no earlier. Throws `RpcUnavailableError`.
 */
export async function evmFinalTime(web3: Web3, confirmations = 1): Promise<bigint> {
  const latest = BigInt(await rpcCall('eth_blockNumber', () => web3.eth.getBlockNumber()));
  const final = latest - BigInt(Math.max(1, confirmations) - 1);
  const block = (await rpcCall(`eth_getBlockByNumber ${final}`, () =>
    web3.requestManager.send({
      method: 'eth_getBlockByNumber',
      params: [`0x${(final < 0n ? 0n : final).toString(16)}`, false],
    }))) as { timestamp?: string } | null;
  if (!block?.timestamp) throw new RpcUnavailableError(`eth_getBlockByNumber ${final} answered no block`);
  return BigInt(block.timestamp);
}

/** What a bridge event search matches: the event's key (topic 1: adId or orderHash) and/or its reqHash (topic 2). */
export interface EventTopics {
  key?: string;
  reqHash?: string;
}

/**
 * The first transaction in which `contract` emitted `event` with the given indexed `topics`,
 * searched in blocks `fromBlock..latest` (every bridge event is indexed by its key, adId or
 * orderHash, then by reqHash), or undefined when there is none. The caller then verifies it like
 * any reported transaction. Throws `RpcUnavailableError` (including a node refusing the range).
 */
export async function findEvmEventTransaction(
  web3: Web3, contract: string, event: BridgeEventName, topics: EventTopics, fromBlock: bigint,
): Promise<string | undefined> {
  const fragment = BRIDGE_INTERFACE.getEvent(event);
  if (!fragment) throw new Error(`unknown event ${event}`);
  const filter = [fragment.topicHash, topics.key?.toLowerCase() ?? null, topics.reqHash?.toLowerCase() ?? null];
  const logs = await rpcCall('eth_getLogs', () =>
    web3.eth.getPastLogs({ address: contract, topics: filter, fromBlock: `0x${fromBlock.toString(16)}`, toBlock: 'latest' }),
  );
  const found = logs.find((log) => typeof log !== 'string' && !log.removed);
  return found && typeof found !== 'string' ? String(found.transactionHash) : undefined;
}

/**
 * The first block mined at or after `unixSeconds` (binary search over block timestamps; about
 * log2(height) header reads), or the next block to be mined when none is yet. Bounds the range a
 * log search reads. Throws `RpcUnavailableError`.
 */
export async function evmBlockAtOrAfter(web3: Web3, unixSeconds: number): Promise<bigint> {
  const latest = BigInt(await rpcCall('eth_blockNumber', () => web3.eth.getBlockNumber()));
  const time = async (n: bigint) => {
    const block = (await rpcCall(`eth_getBlockByNumber ${n}`, () =>
      web3.requestManager.send({ method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, false] }))) as { timestamp?: string } | null;
    return Number(BigInt(block?.timestamp ?? '0'));
  };
  if ((await time(latest)) < unixSeconds) return latest + 1n;
  let low = 0n;
  let high = latest;
  while (low < high) {
    const middle = (low + high) / 2n;
    if ((await time(middle)) < unixSeconds) low = middle + 1n;
    else high = middle;
  }
  return low;
}
