import {
  eip1193Wallet, localStorageTradeStore, type EvmWallet as TradeEvmWallet, type ExecuteOptions, type StellarFeePayer as TradeFeePayer,
  type StellarWallet as TradeStellarWallet,
  type TradeProgress, type TradeRecord, type TradeStore,
} from '@cross-chain-relayer/client/execute';
import { unlockMessage } from '@cross-chain-relayer/client/flows';
import type { AppContext } from './context.ts';
import { UserError } from './errors.ts';
import { evmWallet, onChain } from './steps.ts';

/**
 * The page's side of the client's `executeTrade`/`resumeTrade`: the store the trades are kept in
 * (localStorage, so a reload resumes them), the wallets as the trade code asks for them (the
 * connected ones, read at each call, the EVM wallet switched to the chain first), and each progress
 * event as a sentence for the status line.
 */

/** The page's trade records (localStorage, `relayer.execute.<key>`): what a reload resumes. */
export const tradeStore: TradeStore = localStorageTradeStore(localStorage, 'relayer.execute.');

/** The record this page keeps for `tradeId`, if it drove that trade. */
export async function recordOf(tradeId: string): Promise<TradeRecord | undefined> {
  return (await tradeStore.list()).find((record) => record.tradeId === tradeId);
}

/** The most recent record not over yet (a trade a reload interrupted). */
export async function unfinishedRecord(): Promise<TradeRecord | undefined> {
  return (await tradeStore.list()).filter((record) => !record.outcome).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))[0];
}

/**
 * The connected EVM wallet on `chainId` for the trade code: every call first has the wallet on that
 * chain (asked to switch; named when it will not), so a deposit on one chain and an unlock on the
 * other each go where they belong. Read at each call: a wallet connected after a reload is used.
 */
function evmOn(context: AppContext, chainId: string): TradeEvmWallet {
  const on = async () => {
    const wallet = await onChain(context, chainId);
    return eip1193Wallet(wallet.provider, { from: wallet.address });
  };
  return {
    getAddress: async () => evmWallet(context).address,
    send: async (tx) => {
      const wallet = await on();
      context.say('Confirm the transaction in your wallet…');
      return wallet.send(tx);
    },
    estimateGas: async (tx) => (await on()).estimateGas(tx),
    wait: async (hash, signal) => (await on()).wait(hash, signal),
    call: async (tx) => (await on()).call(tx),
    latestTimestamp: async () => (await on()).latestTimestamp(),
    signOrderHash: async (orderHash) => {
      context.say('Sign the unlock in your wallet…');
      return evmWallet(context).signMessage(orderHash, { bytes: true });
    },
  };
}

/** Freighter for the trade code (its transactions and the SEP-53 unlock text), read at each call. */
function stellarOf(context: AppContext): TradeStellarWallet {
  const wallet = () => {
    if (!context.stellar) throw new UserError('Connect Freighter first: this trade has a Stellar side.');
    return context.stellar;
  };
  return {
    get address() { return wallet().address; },
    signTransaction: async (xdr) => {
      context.say('Confirm the transaction in Freighter…');
      return wallet().signTransaction(xdr);
    },
    signUnlock: async (orderHash) => {
      context.say('Sign the unlock message in Freighter…');
      return wallet().signMessage(unlockMessage(orderHash));
    },
    signAuthEntry: async (preimageXdr) => {
      context.say('Authorise the call in Freighter (your fees are paid by another account)…');
      return wallet().signAuthEntry(preimageXdr);
    },
  };
}

/** The fee payer set beside Freighter ("Fees paid by"): the source of the trade's Soroban transactions, its envelope signed in Freighter. */
function feePayerOf(context: AppContext): TradeFeePayer | undefined {
  const wallet = context.stellar;
  const payer = wallet?.feePayer;
  if (!wallet || !payer || payer === wallet.address) return undefined;
  return {
    address: payer,
    signTransaction: async (xdr) => {
      context.say(`Confirm the transaction in Freighter for the fee payer ${payer.slice(0, 6)}…`);
      return wallet.signTransaction(xdr, payer);
    },
  };
}

/** The wallets `executeTrade` takes, over the page's connected ones, and the Soroban fee payer when one is set. */
export function tradeWallets(context: AppContext): Pick<ExecuteOptions, 'evm' | 'stellar' | 'stellarFeePayer'> {
  return {
    evm: (chainId) => evmOn(context, chainId),
    stellar: context.stellar || context.chains.some((chain) => chain.kind === 'STELLAR') ? stellarOf(context) : undefined,
    stellarFeePayer: feePayerOf(context),
  };
}

const short = (hash: string) => `${hash.slice(0, 10)}…`;

/**
 * A progress event as the status line says it; `before` holds the hashes the record had when a
 * reload resumed it, whose confirmation is said as such. Undefined: nothing worth saying.
 */
export function progressSentence(progress: TradeProgress, before: ReadonlySet<string> = new Set()): string | undefined {
  const { step, status, txHash } = progress;
  if (status === 'sent' && txHash) {
    if (step === 'approve') return `Sent the approval ${short(txHash)}: waiting for the chain to include it.`;
    return `Sent ${short(txHash)}: waiting for the chain to include it, then confirming it to the service.`;
  }
  if (status === 'done' && txHash && before.has(txHash) && step !== 'approve') {
    return `Confirmed the transaction ${short(txHash)} sent before the page was reloaded.`;
  }
  const sentences: Partial<Record<`${TradeProgress['step']}:${TradeProgress['status']}`, string>> = {
    'approve:started': 'Approve the deposit in your wallet…',
    'create:started': 'Reserving the ad\'s liquidity for your deposit…',
    'create:done': 'Reserved: now the deposit.',
    'deposit:started': 'Deposit: confirm it in your wallet…',
    'confirm:done': 'Your deposit is confirmed to the service: waiting for the Maker\'s lock.',
    'lock:waiting': 'Waiting for the Maker\'s lock.',
    'unlock-ad:waiting': 'Waiting for the Maker\'s unlock, which pays you (you may take it yourself: "Take the ad side").',
    'unlock-ad:started': 'Taking the ad side (it pays you): sign the unlock…',
    'unlock-ad:done': 'Your ad-side unlock is confirmed: you are paid.',
    'unlock-order:started': 'Your unlock is due (it pays the Maker): sign it…',
    'unlock-order:done': 'Your unlock is confirmed: the Maker is paid.',
    'refund:waiting': 'The trade expired: waiting for the order chain to pass the refund time, then refunding your deposit.',
    'refund:started': 'Refunding your deposit: confirm it in your wallet…',
    'refund:done': 'Refunded: your deposit is back.',
  };
  return sentences[`${step}:${status}`];
}
