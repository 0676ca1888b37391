import { getAddress } from 'ethers';
import type { Web3 } from 'web3';
import {
  assertFinal,
  NotFinalError,
  TransactionFailedError,
  TransactionNotFoundError,
  WrongContractError,
  WrongEventError,
} from '../errors.ts';
import { assertBindingArgs, assertConfirmations, sameArgValue } from '../event-args.ts';
import { BRIDGE_INTERFACE, type BridgeEventName } from './abi.ts';
import { isTransactionNotFound, rpcCall } from './rpc.ts';

/** What a reported EVM transaction must show. */
export interface ExpectedEvmTransaction {
  txHash: string;
  /** The AdManager or OrderPortal the signed request named. */
  contractAddress: string;
  event: BridgeEventName;
  /** Event arguments that must match, by name: typically `{ reqHash }` and/or `{ orderHash }`. */
  args: Record<string, string | bigint>;
  /** The chain's configured number of confirmations (the including block counts as one); at least 1. */
  confirmations: number;
  /**
   * `finalized`: the including block must also be at or below the node's `finalized` block (chains
   * with a consensus finality gadget, such as Ethereum since the merge). `depth` (default): the
   * confirmations alone decide (chains without the tag; devnets).
   */
  finality?: Finality;
}

/** How a chain decides that a block can no longer be reorganised away. */
export type Finality = 'finalized' | 'depth';

/**
 * A verified event: where it is and all its arguments (integers as decimal strings).
 * `(chainId, txHash, logIndex)` names the event uniquely (record it under a unique key so one event
 * answers one request); `blockHash` is what `isEvmBlockCanonical` re-checks later.
 */
export interface VerifiedEvmEvent {
  /** The chain id the node reports (eth_chainId), decimal. */
  chainId: string;
  txHash: string;
  blockNumber: bigint;
  blockHash: string;
  /** The log's index in its block. */
  logIndex: number;
  /** The account that sent the transaction. */
  from: string;
  event: BridgeEventName;
  args: Record<string, string>;
  confirmations: number;
}

/** Where to read a reported EVM transaction's events: the chain's finality rules and the contract. */
export type EvmTransactionRef = Omit<ExpectedEvmTransaction, 'event' | 'args'>;

/**
 * Checks that `txHash` succeeded, was sent to (or emitted from) the expected contract, emitted the
 * expected event with the expected arguments, and has at least the required confirmations.
 * When the transaction carries several events of that name (a batching contract, a smart account),
 * the one whose arguments match is returned, with its own log index.
 * Throws `TransactionNotFoundError`, `TransactionFailedError`, `WrongContractError`,
 * `WrongEventError`, `NotFinalError` (pending or too few confirmations; retryable) or
 * `RpcUnavailableError` (retryable). Reads only; records nothing.
 */
export async function verifyEvmTransaction(web3: Web3, expected: ExpectedEvmTransaction): Promise<VerifiedEvmEvent> {
  assertBindingArgs(expected.args);
  const events = await readEvmTransactionEvents(web3, expected);
  const match = events.find(
    (event) => event.event === expected.event && Object.entries(expected.args).every(([name, value]) => sameArgValue(event.args[name], value)),
  );
  if (!match) {
    throw new WrongEventError(
      `transaction ${expected.txHash} emitted no ${expected.event} from ${expected.contractAddress} with ${describe(expected.args)}`,
    );
  }
  return match;
}

/**
 * Every bridge event (chains/evm/abi.ts) the contract emitted in `txHash`, in log order, each with
 * its own log index, once the transaction is successful and final by the chain's rules. A
 * transaction may carry events of several subjects (a batching contract calling the AdManager for
 * several orders): the caller picks the one that belongs to its subject. Same errors as
 * `verifyEvmTransaction` except `WrongEventError`; an empty list when the transaction called the
 * contract but it emitted nothing the service knows.
 */
export async function readEvmTransactionEvents(web3: Web3, expected: EvmTransactionRef): Promise<VerifiedEvmEvent[]> {
  const { txHash } = expected;
  assertConfirmations(expected.confirmations);
  if (!/^0x[0-9a-fA-F]{64}$/.test(txHash)) throw new TransactionNotFoundError(`not an EVM transaction hash: '${txHash}'`);
  let receipt;
  try {
    receipt = await rpcCall('eth_getTransactionReceipt', () => web3.eth.getTransactionReceipt(txHash), {
      passThrough: isTransactionNotFound,
    });
  } catch (error) {
    if (!isTransactionNotFound(error)) throw error;
    const pending = await rpcCall('eth_getTransactionByHash', () => web3.eth.getTransaction(txHash), {
      passThrough: isTransactionNotFound,
    }).catch((inner: unknown) => {
      if (isTransactionNotFound(inner)) return null;
      throw inner;
    });
    if (pending) throw new NotFinalError(`transaction ${txHash} is pending`, 0, expected.confirmations);
    throw new TransactionNotFoundError(`transaction ${txHash} not found on this chain`);
  }
  if (!receipt) throw new TransactionNotFoundError(`transaction ${txHash} not found on this chain`);
  if (BigInt(receipt.status) !== 1n) throw new TransactionFailedError(`transaction ${txHash} reverted`);

  const contract = expected.contractAddress.toLowerCase();
  const fromContract = receipt.logs.filter((log) => String(log.address).toLowerCase() === contract);
  if (fromContract.length === 0 && String(receipt.to ?? '').toLowerCase() !== contract) {
    throw new WrongContractError(`transaction ${txHash} went to ${receipt.to ?? 'a contract creation'}, not ${expected.contractAddress}`);
  }
  const decoded: { logIndex: number; event: BridgeEventName; args: Record<string, string> }[] = [];
  for (const log of fromContract) {
    let parsed;
    try {
      parsed = BRIDGE_INTERFACE.parseLog({ topics: (log.topics ?? []).map(String), data: String(log.data ?? '0x') });
    } catch {
      continue; // a known topic with a malformed body is not one of our events
    }
    if (!parsed) continue;
    const args = Object.fromEntries(parsed.fragment.inputs.map((input, i) => [input.name, stringify(parsed.args[i])]));
    decoded.push({ logIndex: Number(log.logIndex ?? 0), event: parsed.name as BridgeEventName, args });
  }

  const [latest, chainId] = await Promise.all([
    rpcCall('eth_blockNumber', () => web3.eth.getBlockNumber()),
    nodeChainId(web3),
  ]);
  const blockNumber = BigInt(receipt.blockNumber);
  const confirmations = Number(BigInt(latest) - blockNumber + 1n);
  assertFinal(txHash, confirmations, expected.confirmations);
  if (expected.finality === 'finalized') {
    const finalized = await blockHeader(web3, 'finalized');
    if (!finalized || BigInt(finalized.number) < blockNumber) {
      throw new NotFinalError(
        `transaction ${txHash} in block ${blockNumber} is not finalized yet (finalized: ${finalized?.number ?? 'none'})`,
        confirmations,
        expected.confirmations,
      );
    }
  }
  const from = getAddress(String(receipt.from));
  return decoded.map((event) => ({
    chainId: BigInt(chainId).toString(),
    txHash,
    blockNumber,
    blockHash: String(receipt.blockHash),
    logIndex: event.logIndex,
    from,
    event: event.event,
    args: event.args,
    confirmations,
  }));
}

/** How long the chain id a node reported is reused before it is asked again. */
const CHAIN_ID_TTL_MS = 60_000;
const chainIds = new WeakMap<Web3, { chainId: Promise<bigint>; askedAt: number }>();

/**
 * The chain id the client's node reports (eth_chainId), asked at most once a minute per client
 * rather than with every transaction: an endpoint does not change chains, and the caller still
 * compares it with the chain it expects (chains/verify.ts), so an RPC URL pointed at another chain
 * is still caught within the minute. A failed ask is not kept.
 */
function nodeChainId(web3: Web3): Promise<bigint> {
  const cached = chainIds.get(web3);
  if (cached && Date.now() - cached.askedAt < CHAIN_ID_TTL_MS) return cached.chainId;
  const chainId = rpcCall('eth_chainId', () => web3.eth.getChainId()).then(BigInt);
  chainIds.set(web3, { chainId, askedAt: Date.now() });
  chainId.catch(() => {
    if (chainIds.get(web3)?.chainId === chainId) chainIds.delete(web3);
  });
  return chainId;
}

/**
 * Whether the block `blockNumber` on the node's canonical chain still has `blockHash`: false once
 * it was reorganised away (another block at that height, or the chain is now shorter). Call it
 * before signing anything that depends on an event verified earlier. Throws `RpcUnavailableError`.
 */
export async function isEvmBlockCanonical(web3: Web3, blockNumber: bigint, blockHash: string): Promise<boolean> {
  const block = await blockHeader(web3, `0x${blockNumber.toString(16)}`);
  return !!block && block.hash.toLowerCase() === blockHash.toLowerCase();
}

/** Number and hash of a block by number or tag, null when the node has no such block. */
async function blockHeader(web3: Web3, block: string): Promise<{ number: string; hash: string } | null> {
  const result = await rpcCall(`eth_getBlockByNumber ${block}`, () =>
    web3.requestManager.send({ method: 'eth_getBlockByNumber', params: [block, false] }),
  );
  const header = result as { number?: string; hash?: string } | null;
  return header?.number && header.hash ? { number: header.number, hash: header.hash } : null;
}

function stringify(value: unknown): string {
  return typeof value === 'bigint' ? value.toString() : String(value);
}


function describe(args: Record<string, string | bigint>): string {
  return Object.entries(args)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(', ');
}
