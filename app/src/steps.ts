import { confirmUntilFinal } from '@cross-chain-relayer/client';
import { evmTransaction, type CallExtras, type EvmAction, type SignedResponse } from '@cross-chain-relayer/client/evm';
import { unlockMessage } from '@cross-chain-relayer/client/flows';
import { apiError, UserError } from './errors.ts';
import { chainOf, type AppContext } from './context.ts';
import type { StellarAction } from '@cross-chain-relayer/client/stellar';
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
  if (chain && chain.kind !== 'EVM') throw new UserError(`${chain.name} is a Stellar chain: its transactions are signed in Freighter.`);
  await wallet.ensureChain(chainId, chain?.name ?? `chain ${chainId}`);
  return wallet;
}

/**
 * Readies the wallet for `chainId` before anything is asked of the API: the EVM wallet switched to
 * it (named when it cannot), or, for a Stellar chain, Freighter connected.
 */
export async function ready(context: AppContext, chainId: string): Promise<void> {
  if (chainOf(context, chainId)?.kind === 'STELLAR') {
    if (!context.stellar) throw new UserError('Connect Freighter first: this is a Stellar chain.');
    return;
  }
  await onChain(context, chainId);
}

/**
 * Lets `spender` take `amount` of `token` from the EVM wallet (ERC-20 approve). Nothing for a native
 * token, nor on Stellar, where the contract's token transfer is authorised inside its own transaction.
 */
export async function approveFor(context: AppContext, chainId: string, token: { kind: string; address: string }, spender: string, amount: bigint): Promise<void> {
  if (token.kind === 'NATIVE' || chainOf(context, chainId)?.kind === 'STELLAR') return;
  await (await onChain(context, chainId)).approve(token.address, spender, amount);
}

/** The connected wallet's address on `chainId` (Freighter's on a Stellar chain), or a sentence saying to connect one. */
export function addressOn(context: AppContext, chainId: string): string {
  if (chainOf(context, chainId)?.kind === 'STELLAR') {
    if (!context.stellar) throw new UserError('Connect Freighter first: this is a Stellar chain.');
    return context.stellar.address;
  }
  return evmWallet(context).address;
}

/**
 * The unlock signature POST /v1/trades/{id}/unlock takes, from the wallet of the chain the unlock
 * pays out on (`chainId`: the ad chain for the Maker's, the order chain for the Bridger's): on a
 * Stellar chain Freighter's `signMessage` of the order hash as lower-case `0x` hex text (SEP-53, the
 * client's `unlockMessage(orderHash)`, from `./flows`, which carries no stellar-sdk); on an EVM
 * chain personal_sign of the hash's 32 bytes.
 */
export async function signUnlock(context: AppContext, chainId: string, orderHash: string): Promise<string> {
  if (chainOf(context, chainId)?.kind === 'STELLAR') {
    if (!context.stellar) throw new UserError('Connect Freighter first: this unlock is on a Stellar chain.');
    context.say('Sign the unlock message in Freighter…');
    return context.stellar.signMessage(unlockMessage(orderHash));
  }
  return evmWallet(context).signMessage(orderHash, { bytes: true });
}

/** Which confirmation a sent transaction is for: an ad's, a trade's (deposit, lock), a trade's unlock. */
export interface ConfirmTarget { kind: 'ad' | 'trade' | 'unlock'; id: string }
interface PendingConfirm extends ConfirmTarget { txHash: string }

const PENDING = 'relayer.pending';
const pending = (): PendingConfirm[] => { try { return JSON.parse(localStorage.getItem(PENDING) ?? '[]'); } catch { return []; } };
const keep = (list: PendingConfirm[]): void => localStorage.setItem(PENDING, JSON.stringify(list));

/** The confirmation call for `target`. */
function confirmCall(context: AppContext, target: ConfirmTarget, txHash: string): () => Promise<{ data?: unknown; error?: unknown; response: Response }> {
  const { api } = context.session;
  const options = { params: { path: { id: target.id } }, body: { txHash } };
  if (target.kind === 'ad') return () => api.POST('/v1/ads/{id}/confirm', options);
  if (target.kind === 'trade') return () => api.POST('/v1/trades/{id}/confirm', options);
  return () => api.POST('/v1/trades/{id}/unlock/confirm', options);
}

/**
 * Sends the API's signed response for `action` from the wallet on `chainId`, waits for it to be
 * mined, and confirms it to the service. The hash is kept (localStorage) from the moment the
 * wallet gives it until the service has it: a reload in between loses nothing (resumePending).
 */
export async function sendAndConfirm(context: AppContext, chainId: string, action: EvmAction, signed: unknown, target: ConfirmTarget, extras?: CallExtras): Promise<string> {
  const chain = chainOf(context, chainId);
  // From here a reload loses nothing (resumePending): the person is told so, with the hash.
  const remember = (hash: string) => {
    keep([...pending(), { ...target, txHash: hash }]);
    context.say(`Sent ${hash.slice(0, 10)}…: waiting for the chain to include it, then confirming it to the service.`);
  };
  let txHash: string;
  if (chain?.kind === 'STELLAR') {
    if (!context.stellar) throw new UserError('Connect Freighter first: this is a Stellar chain.');
    context.say(`Confirm the ${action} transaction in Freighter…`);
    // stellar-sdk is a separate chunk, fetched the first time a Stellar transaction is sent.
    const { sendStellar } = await import('./wallets/stellar-send.ts');
    txHash = await sendStellar(context.stellar, chain, action as StellarAction, signed, remember, extras as Parameters<typeof sendStellar>[5]);
  } else {
    const wallet = await onChain(context, chainId);
    context.say(`Confirm the ${action} transaction in your wallet…`);
    txHash = await wallet.send(evmTransaction(action, signed as SignedResponse, extras), remember);
  }
  await confirm(context, confirmCall(context, target, txHash));
  keep(pending().filter((entry) => entry.txHash !== txHash));
  return txHash;
}

/**
 * Confirms the transactions sent before a reload whose confirmation never reached the service;
 * true when one was. Those the service refuses for good are dropped, said; a chain not reachable
 * keeps them for the next load.
 */
export async function resumePending(context: AppContext): Promise<boolean> {
  let any = false;
  for (const entry of pending()) {
    try {
      await confirm(context, confirmCall(context, entry, entry.txHash));
      any = true;
      context.say(`Confirmed the transaction ${entry.txHash.slice(0, 10)}… sent before the page was reloaded.`, 'done');
      keep(pending().filter((other) => other.txHash !== entry.txHash));
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code && !['RPC_UNAVAILABLE', 'CHAIN_UNAVAILABLE', 'CHAIN_FACTS_DISAGREE', 'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE', 'UNAUTHENTICATED', 'TOKEN_EXPIRED'].includes(code)) {
        keep(pending().filter((other) => other.txHash !== entry.txHash));
      }
      context.say(`The transaction ${entry.txHash.slice(0, 10)}… sent before the reload could not be confirmed: ${(error as Error).message}`, 'error');
    }
  }
  return any;
}

/**
 * A confirmation call (POST …/confirm): a transaction the service does not see as final yet (409
 * NOT_FINAL / TRADE_AWAITING with Retry-After) is asked again after the time it says (the client's
 * confirmUntilFinal), a few times over about a minute. Returns the data or throws the API's error as a sentence.
 */
export async function confirm<T>(context: AppContext, request: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const answer = await confirmUntilFinal(request, { retries: 20, maxDelayMs: 10_000, onWait: () => context.say('Waiting for the transaction to be final…') });
  if (answer.error !== undefined || answer.data === undefined) throw apiError(answer.error, answer.response.status);
  return answer.data;
}
