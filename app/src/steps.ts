import { evmTransaction, type CallExtras, type EvmAction, type SignedResponse } from '@cross-chain-relayer/client/evm';
import { apiError, UserError } from './errors.ts';
import { chainOf, type AppContext } from './context.ts';
import type { EvmWallet } from './wallets/evm.ts';

/** The connected EVM wallet, or a sentence saying to connect one. */
export function evmWallet(context: AppContext): EvmWallet {
  if (!context.evm) throw new UserError('Connect an EVM wallet first.');
  return context.evm;
}

/** The wallet on `chainId` (switched when it can; named when it cannot). */
export async function onChain(context: AppContext, chainId: string): Promise<EvmWallet> {
  const wallet = evmWallet(context);
  const chain = chainOf(context, chainId);
  if (chain && chain.kind !== 'EVM') throw new UserError(`${chain.name} is a Stellar chain: its transactions need the client's Stellar helpers, which this page does not have yet.`);
  await wallet.ensureChain(chainId, chain?.name ?? `chain ${chainId}`);
  return wallet;
}

/** Sends the API's signed response for `action` from the wallet, on `chainId`; the mined hash. */
export async function submit(context: AppContext, chainId: string, action: EvmAction, signed: unknown, extras?: CallExtras): Promise<string> {
  const wallet = await onChain(context, chainId);
  context.say(`Confirm the ${action} transaction in your wallet…`);
  return wallet.send(evmTransaction(action, signed as SignedResponse, extras));
}

/**
 * A confirmation call (POST …/confirm): a transaction the service does not see as final yet (409
 * NOT_FINAL with Retry-After) is asked again after the time it says, up to a minute.
 */
export async function confirm<T>(context: AppContext, request: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await request();
    const code = (answer.error as { code?: string } | undefined)?.code;
    if (answer.response.status === 409 && (code === 'NOT_FINAL' || code === 'TRADE_AWAITING') && Date.now() < deadline) {
      const wait = Number(answer.response.headers.get('retry-after') ?? '1');
      context.say('Waiting for the transaction to be final…');
      await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(wait, 1), 10) * 1000));
      continue;
    }
    if (answer.error !== undefined || answer.data === undefined) throw apiError(answer.error, answer.response.status);
    return answer.data;
  }
}
