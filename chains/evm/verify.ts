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

/**
 * Checks that `txHash` succeeded, was sent to (or emitted from) the expected contract, emitted the
 * expected event with the expected arguments, and has at least the required confirmations.
 * Throws `TransactionNotFoundError`, `TransactionFailedError`, `WrongContractError`,
 * `WrongEventError`, `NotFinalError` (pending or too few confirmations; retryable) or
 * `RpcUnavailableError` (retryable). Reads only; records nothing.
 */
export async function verifyEvmTransaction(web3: Web3, expected: ExpectedEvmTransaction): Promise<VerifiedEvmEvent> {
  const { txHash } = expected;
  assertBindingArgs(expected.args);
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
  const fragment = BRIDGE_INTERFACE.getEvent(expected.event);
  if (!fragment) throw new Error(`unknown event ${expected.event}`);
  let match: { log: (typeof fromContract)[number]; args: Record<string, string> } | undefined;
  for (const log of fromContract) {
    if (String(log.topics?.[0] ?? '').toLowerCase() !== fragment.topicHash) continue;
    const parsed = BRIDGE_INTERFACE.parseLog({ topics: (log.topics ?? []).map(String), data: String(log.data ?? '0x') });
    if (!parsed) continue;
    const args = Object.fromEntries(
      parsed.fragment.inputs.map((input, i) => [input.name, stringify(parsed.args[i])]),
    );
    if (Object.entries(expected.args).every(([name, value]) => sameArgValue(args[name], value))) {
      match = { log, args };
      break;
    }
  }
  if (!match) {
    throw new WrongEventError(
      `transaction ${txHash} emitted no ${expected.event} from ${expected.contractAddress} with ${describe(expected.args)}`,
    );
  }

  const [latest, chainId] = await Promise.all([
    rpcCall('eth_blockNumber', () => web3.eth.getBlockNumber()),
    rpcCall('eth_chainId', () => web3.eth.getChainId()),
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
  return {
    chainId: BigInt(chainId).toString(),
    txHash,
    blockNumber,
    blockHash: String(receipt.blockHash),
    logIndex: Number(match.log.logIndex ?? 0),
    from: getAddress(String(receipt.from)),
    event: expected.event,
    args: match.args,
    confirmations,
  };
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
