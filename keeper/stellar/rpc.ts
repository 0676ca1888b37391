import { Keypair, rpc, xdr, type FeeBumpTransaction, type Transaction } from '@stellar/stellar-sdk';
import { createJsonRpcCall, JsonRpcAnswerError } from '../json-rpc.ts';

/** The latest closed ledger: its number and its close time (unix seconds), the chain's own clock. */
export interface StellarLedger {
  sequence: number;
  closeTime: bigint;
}

/** The keeper's account as the ledger holds it. */
export interface StellarAccountState {
  /** The sequence number of the account's last transaction (the next one must carry this + 1). */
  sequence: bigint;
  /** Native balance, in stroops. */
  balance: bigint;
}

/** What `sendTransaction` answered: PENDING (taken), DUPLICATE (known), TRY_AGAIN_LATER, or ERROR with the result code. */
export interface StellarSendAnswer {
  status: 'PENDING' | 'DUPLICATE' | 'TRY_AGAIN_LATER' | 'ERROR';
  /** ERROR: the transaction result's code (txBadSeq, txTooLate, txInsufficientFee, txNotSupported, ...). */
  errorCode?: string;
}

/** A transaction the ledger holds: applied (SUCCESS) or failed in its ledger (FAILED). */
export interface StellarTransactionResult {
  success: boolean;
  ledger: number;
  /** The latest ledger the answering node had closed. */
  latestLedger: number;
}

/** The few Soroban RPC calls the keeper's Stellar sender makes. */
export interface KeeperStellarRpc {
  latestLedger(): Promise<StellarLedger>;
  /** Undefined when the account does not exist (never funded). */
  account(publicKey: string): Promise<StellarAccountState | undefined>;
  /** The inclusion fee per operation (stroops) recent ledgers' Soroban transactions paid at the 90th percentile. */
  inclusionFee(): Promise<bigint>;
  simulate(tx: Transaction): Promise<rpc.Api.SimulateTransactionResponse>;
  send(tx: Transaction | FeeBumpTransaction): Promise<StellarSendAnswer>;
  /** Null when the node knows no such transaction in a closed ledger (pending, dropped, never seen, or older than its retention). */
  transaction(hash: string): Promise<StellarTransactionResult | null>;
}

/**
 * The keeper's Soroban RPC calls, through the chain's providers in order (a provider that does not
 * answer is skipped; an answer with a JSON-RPC error is thrown as `JsonRpcAnswerError`; none
 * answering: `RpcUnavailableError`).
 */
export function createKeeperStellarRpc(urls: readonly string[], options: { timeoutMs?: number } = {}): KeeperStellarRpc {
  const call = createJsonRpcCall(urls, { label: 'Stellar', timeoutMs: options.timeoutMs });
  return {
    async latestLedger() {
      const latest = await call<{ sequence: number; closeTime?: string }>('getLatestLedger', {});
      if (latest.closeTime !== undefined) return { sequence: latest.sequence, closeTime: BigInt(latest.closeTime) };
      // Older RPC servers answer no close time here; getLedgers has it.
      const page = await call<{ ledgers: { sequence: number; ledgerCloseTime: string }[] }>(
        'getLedgers', { startLedger: latest.sequence, pagination: { limit: 1 } },
      );
      const ledger = page.ledgers[0];
      if (!ledger) throw new JsonRpcAnswerError('getLedgers', 0, `no ledger ${latest.sequence}`);
      return { sequence: ledger.sequence, closeTime: BigInt(ledger.ledgerCloseTime) };
    },
    async account(publicKey) {
      const key = xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(publicKey).xdrAccountId() }));
      const found = await call<{ entries?: { xdr: string }[] | null }>('getLedgerEntries', { keys: [key.toXDR('base64')] });
      const entry = found.entries?.[0];
      if (!entry) return undefined;
      const data = xdr.LedgerEntryData.fromXDR(entry.xdr, 'base64').account();
      return { sequence: BigInt(data.seqNum().toString()), balance: BigInt(data.balance().toString()) };
    },
    async inclusionFee() {
      const stats = await call<{ sorobanInclusionFee?: { p90?: string } }>('getFeeStats', {});
      return BigInt(stats.sorobanInclusionFee?.p90 ?? '100');
    },
    async simulate(tx) {
      return rpc.parseRawSimulation(await call<rpc.Api.RawSimulateTransactionResponse>('simulateTransaction', { transaction: tx.toXDR() }));
    },
    async send(tx) {
      const answer = await call<{ status: StellarSendAnswer['status']; errorResultXdr?: string }>('sendTransaction', { transaction: tx.toXDR() });
      if (answer.status !== 'ERROR') return { status: answer.status };
      let errorCode = 'unknown';
      try {
        if (answer.errorResultXdr) errorCode = xdr.TransactionResult.fromXDR(answer.errorResultXdr, 'base64').result().switch().name;
      } catch {
        errorCode = 'unreadable result';
      }
      return { status: 'ERROR', errorCode };
    },
    async transaction(hash) {
      const got = await call<{ status: 'SUCCESS' | 'FAILED' | 'NOT_FOUND'; ledger?: number; latestLedger: number }>('getTransaction', { hash });
      if (got.status === 'NOT_FOUND') return null;
      return { success: got.status === 'SUCCESS', ledger: Number(got.ledger), latestLedger: Number(got.latestLedger) };
    },
  };
}
