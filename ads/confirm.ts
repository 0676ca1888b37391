import type { Knex } from 'knex';
import { uuidToBytes32 } from '../chains/address.ts';
import { WrongEventError } from '../chains/errors.ts';
import { canonicalTxHash } from '../chains/tx-hash.ts';
import type { TransactionVerifier, VerifiedAction } from '../chains/verify.ts';
import type { AdRecord } from '../db/repositories/ads.ts';
import { confirmableRequests, requestConfirmedBy, type AdRequestRecord } from '../db/repositories/ad-requests.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import { ChainUnavailableError, TransactionMismatchError } from './errors.ts';

export type AnsweredRequest =
  | { alreadyConfirmed: true }
  | { alreadyConfirmed: false; request: AdRequestRecord; txHash: string; event: VerifiedAction };

/** The transaction hash as stored for the chain, or a `TransactionMismatchError` naming txHash. */
function normalizeTxHash(chain: ChainConnection, txHash: string): string {
  const canonical = canonicalTxHash(chain.kind, txHash);
  if (!canonical) throw new TransactionMismatchError(`must be a 32-byte transaction hash, received '${txHash}'`);
  return canonical;
}

/**
 * Which pending request of `ad` the transaction answers, verified on the ad chain: the contract,
 * the action's event carrying the request's reqHash (which binds every signed argument), the ad
 * id and amount, and finality. A transaction already confirmed for this ad is reported as such; one
 * confirmed for another ad, or matching no confirmable request, is a `TransactionMismatchError`.
 * `NotFinalError` and RPC outages propagate (retryable).
 */
export async function findAnsweredRequest(input: {
  knex: Knex;
  verifier: TransactionVerifier;
  chain: ChainConnection;
  ad: AdRecord;
  txHash: string;
  /** Requests with a deadline before this are no longer confirmable. */
  cutoff: Date;
}): Promise<AnsweredRequest> {
  const { chain, ad } = input;
  const txHash = normalizeTxHash(chain, input.txHash);
  const earlier = await requestConfirmedBy(input.knex, chain.chainId, txHash);
  if (earlier) {
    if (earlier.adId === ad.id) return { alreadyConfirmed: true };
    throw new TransactionMismatchError(`${txHash} already confirmed a request of another ad`);
  }
  if (!chain.rpcUrl) throw new ChainUnavailableError(`chain ${chain.chainId} has no RPC URL registered: its transactions cannot be verified`);
  const candidates = await confirmableRequests(input.knex, ad.id, input.cutoff);
  for (const request of candidates) {
    const args: Record<string, string> = { reqHash: request.reqHash, adId: uuidToBytes32(ad.id) };
    if (request.amount !== null) args.amount = request.amount;
    try {
      const verified = await input.verifier.verify(
        { kind: chain.kind, chainId: chain.chainId, rpcUrl: chain.rpcUrl, confirmations: chain.confirmations },
        { txHash, contractAddress: request.contractAddress, action: request.action, args },
      );
      return { alreadyConfirmed: false, request, txHash, event: verified };
    } catch (error) {
      if (error instanceof WrongEventError) continue; // another request's transaction, or none of ours
      throw error;
    }
  }
  throw new TransactionMismatchError(`${txHash} answers no pending request of ad ${ad.id}`);
}
