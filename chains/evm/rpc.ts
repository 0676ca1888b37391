import { Web3 } from 'web3';
import { RpcUnavailableError } from '../errors.ts';

/** A web3 client for one EVM chain's JSON-RPC endpoint. */
export function createEvmClient(rpcUrl: string): Web3 {
  return new Web3(rpcUrl);
}

/** web3's error for an unknown transaction hash (code 430), which is an answer, not an outage. */
export function isTransactionNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 430 || (error as Error | null)?.constructor?.name === 'TransactionNotFound';
}

/**
 * Runs one RPC call; any transport or JSON-RPC error, or no answer within `timeoutMs`, becomes
 * `RpcUnavailableError` naming what was asked. `passThrough` errors (e.g. not found) are rethrown as they are.
 */
export async function rpcCall<T>(
  what: string,
  call: () => Promise<T>,
  options: { timeoutMs?: number; passThrough?: (error: unknown) => boolean } = {},
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeoutMs = options.timeoutMs ?? 15_000;
  try {
    return await Promise.race([
      call(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    if (options.passThrough?.(error)) throw error;
    throw new RpcUnavailableError(`EVM RPC failed on ${what}: ${(error as Error).message}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
