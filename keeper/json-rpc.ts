import { RpcUnavailableError } from '../chains/errors.ts';

/** A JSON-RPC error a node answered with (the request arrived; the node refused it). */
export class JsonRpcAnswerError extends Error {
  constructor(
    readonly method: string,
    readonly rpcCode: number,
    message: string,
  ) {
    super(`${method}: ${message}`);
  }
}

/** One JSON-RPC call over a chain's providers. */
export type JsonRpcCall = <T>(method: string, params: unknown) => Promise<T>;

/**
 * JSON-RPC calls through a chain's providers in order, as the keeper's senders make them: a provider
 * that does not answer (transport error, HTTP error, no answer within `timeoutMs`) is skipped for the
 * next; an answer carrying a JSON-RPC error is the node's and is thrown as `answerError(...)`
 * (`JsonRpcAnswerError` by default). When no provider answers: `RpcUnavailableError`, naming the
 * providers by their place in the list, never by their URL (provider URLs carry API keys).
 */
export function createJsonRpcCall(
  urls: readonly string[],
  options: { label: string; timeoutMs?: number; answerError?: (method: string, code: number, message: string) => Error },
): JsonRpcCall {
  if (urls.length === 0) throw new Error('the keeper needs at least one RPC URL per chain');
  const answerError = options.answerError ?? ((method, code, message) => new JsonRpcAnswerError(method, code, message));
  let id = 0;
  return async <T>(method: string, params: unknown): Promise<T> => {
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
        failures.push(`provider ${index + 1}: ${(error as Error).message}`);
        continue;
      }
      if (body.error) throw answerError(method, body.error.code, body.error.message);
      return body.result as T;
    }
    throw new RpcUnavailableError(`${options.label} RPC failed on ${method}: ${failures.join('; ')}`);
  };
}
