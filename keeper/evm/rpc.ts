import { createJsonRpcCall, JsonRpcAnswerError } from '../json-rpc.ts';

/** A JSON-RPC error the node answered with (the request arrived; the node refused it). */
export class EvmRpcAnswerError extends JsonRpcAnswerError {
  /** Whether the node refused a call because it would revert (estimateGas, call). */
  get reverts(): boolean {
    return this.rpcCode === 3 || /revert/i.test(this.message);
  }
}

/** A mined transaction as the keeper needs it. */
export interface EvmReceipt {
  txHash: string;
  blockNumber: bigint;
  blockHash: string;
  success: boolean;
}

/** The few EVM calls the keeper's sender makes. */
export interface KeeperEvmRpc {
  blockNumber(): Promise<bigint>;
  /** The latest block's timestamp (unix seconds): the chain's time a send's window is judged by. */
  latestTime(): Promise<bigint>;
  /** The latest block's base fee per gas. */
  baseFee(): Promise<bigint>;
  /** The node's suggested priority fee; `fallback` when it has none. */
  priorityFee(fallback: bigint): Promise<bigint>;
  /** Transactions `account` sent that are mined (`latest`) or also pending in the node (`pending`). */
  nonce(account: string, tag: 'latest' | 'pending'): Promise<bigint>;
  balance(account: string): Promise<bigint>;
  estimateGas(tx: { from: string; to: string; data: string; value: bigint }): Promise<bigint>;
  sendRaw(raw: string): Promise<string>;
  receipt(txHash: string): Promise<EvmReceipt | null>;
}

/**
 * The keeper's EVM calls over plain JSON-RPC, through the chain's providers in order: a provider that
 * does not answer (transport error, no answer within `timeoutMs`) is skipped for the next; an answer
 * with a JSON-RPC error is the node's and is thrown as `EvmRpcAnswerError`. When none answers:
 * `RpcUnavailableError`.
 */
export function createKeeperEvmRpc(urls: readonly string[], options: { timeoutMs?: number } = {}): KeeperEvmRpc {
  const call = createJsonRpcCall(urls, {
    label: 'EVM', timeoutMs: options.timeoutMs, answerError: (method, code, message) => new EvmRpcAnswerError(method, code, message),
  });
  return {
    blockNumber: async () => BigInt(await call<string>('eth_blockNumber', [])),
    latestTime: async () => BigInt((await call<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false])).timestamp),
    baseFee: async () => BigInt((await call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false])).baseFeePerGas ?? '0x0'),
    priorityFee: async (fallback) => {
      try {
        return BigInt(await call<string>('eth_maxPriorityFeePerGas', []));
      } catch (error) {
        if (error instanceof EvmRpcAnswerError) return fallback;
        throw error;
      }
    },
    nonce: async (account, tag) => BigInt(await call<string>('eth_getTransactionCount', [account, tag])),
    balance: async (account) => BigInt(await call<string>('eth_getBalance', [account, 'latest'])),
    estimateGas: async (tx) => {
      const call1 = { from: tx.from, to: tx.to, data: tx.data, value: `0x${tx.value.toString(16)}` };
      return BigInt(await call<string>('eth_estimateGas', [call1]));
    },
    sendRaw: (raw) => call<string>('eth_sendRawTransaction', [raw]),
    receipt: async (txHash) => {
      const r = await call<{ transactionHash: string; blockNumber: string; blockHash: string; status: string } | null>('eth_getTransactionReceipt', [txHash]);
      return r ? { txHash: r.transactionHash, blockNumber: BigInt(r.blockNumber), blockHash: r.blockHash, success: r.status === '0x1' } : null;
    },
  };
}
