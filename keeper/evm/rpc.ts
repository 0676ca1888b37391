import { RpcUnavailableError } from '../../chains/errors.ts';

/** A JSON-RPC error the node answered with (the request arrived; the node refused it). */
export class EvmRpcAnswerError extends Error {
  constructor(
    readonly method: string,
    readonly rpcCode: number,
    message: string,
  ) {
    super(`${method}: ${message}`);
  }

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
  if (urls.length === 0) throw new Error('the keeper needs at least one RPC URL per chain');
  let id = 0;
  const call = async <T>(method: string, params: unknown[]): Promise<T> => {
    const failures: string[] = [];
    for (const [index, url] of urls.entries()) {
      let body: { result?: T; error?: { code: number; message: string } };
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        body = (await response.json()) as typeof body;
      } catch (error) {
        // Provider URLs carry API keys: name the provider by its place in the list, never by its URL.
        failures.push(`provider ${index + 1}: ${(error as Error).message}`);
        continue;
      }
      if (body.error) throw new EvmRpcAnswerError(method, body.error.code, body.error.message);
      return body.result as T;
    }
    throw new RpcUnavailableError(`EVM RPC failed on ${method}: ${failures.join('; ')}`);
  };
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
