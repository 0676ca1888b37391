import type { Knex } from 'knex';
import { uuidToBytes32 } from '../chains/address.ts';
import { EVENT_OF_ACTION } from '../chains/evm/abi.ts';
import { WrongContractError } from '../chains/errors.ts';
import { sameArgValue } from '../chains/event-args.ts';
import { canonicalTxHash } from '../chains/tx-hash.ts';
import type { TransactionVerifier, VerifiedAction } from '../chains/verify.ts';
import type { AdRecord } from '../db/repositories/ads.ts';
import { requestsOfAd, type AdRequestRecord } from '../db/repositories/ad-requests.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import { ChainUnavailableError, TransactionMismatchError } from './errors.ts';

/** A request of the ad and the verified event of the reported transaction that answers it. */
export interface AnsweredRequest {
  request: AdRequestRecord;
  event: VerifiedAction;
}

export interface AnsweredRequests {
  /** The canonical spelling of the reported transaction hash. */
  txHash: string;
  /** Requests of the ad the transaction answers that are not confirmed yet (several when it batched them). */
  answered: AnsweredRequest[];
}

/** The transaction hash as stored for the chain, or a `TransactionMismatchError` naming txHash. */
function normalizeTxHash(chain: ChainConnection, txHash: string): string {
  const canonical = canonicalTxHash(chain.kind, txHash);
  if (!canonical) throw new TransactionMismatchError(`must be a 32-byte transaction hash, received '${txHash}'`);
  return canonical;
}

/**
 * The requests of `ad` that the transaction answers, verified on the ad chain: the transaction
 * succeeded and is final, and for each request, the AdManager emitted the action's event carrying
 * the request's reqHash (which binds every signed argument), the ad id and the amount. A
 * transaction may carry events of several requests and several ads (a batching contract): each
 * request is matched by its own event, whatever else the transaction did.
 *
 * Lateness does not matter: a request past its deadline (even one whose hold expired) is still
 * answered by a transaction the contract accepted, since the contract itself refuses one mined
 * after the deadline. An empty `answered` means the transaction only answers requests already
 * confirmed (a repeat); a transaction answering no request of the ad is a `TransactionMismatchError`.
 * `NotFinalError` and RPC outages propagate (retryable).
 */
export async function findAnsweredRequests(input: {
  knex: Knex;
  verifier: TransactionVerifier;
  chain: ChainConnection;
  ad: AdRecord;
  txHash: string;
}): Promise<AnsweredRequests> {
  const { chain, ad } = input;
  const txHash = normalizeTxHash(chain, input.txHash);
  if (!chain.rpcUrl) throw new ChainUnavailableError(`chain ${chain.chainId} has no RPC URL registered: its transactions cannot be verified`);
  const requests = (await requestsOfAd(input.knex, ad.id)).filter((request) => request.chainId === chain.chainId);
  const adKey = uuidToBytes32(ad.id);
  const answered: AnsweredRequest[] = [];
  let repeat = false;
  let touched = false;
  for (const contractAddress of new Set(requests.map((request) => request.contractAddress))) {
    let events: VerifiedAction[];
    try {
      events = await input.verifier.events(
        chain,
        { txHash, contractAddress },
      );
    } catch (error) {
      if (error instanceof WrongContractError) continue; // a transaction to another AdManager deployment of this ad's requests
      throw error;
    }
    touched = true;
    for (const event of events) {
      const request = requests.find((r) =>
        r.contractAddress === contractAddress && EVENT_OF_ACTION[r.action] === event.event && sameArgValue(event.args.reqHash, r.reqHash));
      if (!request) continue;
      // The reqHash binds them already; checked again so that a contract emitting something else is never credited.
      if (!sameArgValue(event.args.adId, adKey)) continue;
      if (request.amount !== null && !sameArgValue(event.args.amount, request.amount)) continue;
      if (request.status === 'CONFIRMED') repeat = true;
      else answered.push({ request, event });
    }
  }
  if (answered.length === 0 && !repeat) {
    if (!touched) throw new TransactionMismatchError(`${txHash} did not call the AdManager of ad ${ad.id}`);
    throw new TransactionMismatchError(`${txHash} answers no request of ad ${ad.id}`);
  }
  return { txHash, answered };
}
