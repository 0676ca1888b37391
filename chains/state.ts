import type { OnChainAd } from './adapter.ts';
import type { BridgeEventName } from './evm/abi.ts';
import type { EventTopics } from './evm/state.ts';
import { ChainVerificationError } from './errors.ts';
import { createChains, type Chains, type ChainTarget } from './chains.ts';
import { eventOf } from './event-of.ts';
import type { ActionName } from './request-schema.ts';

export type { OnChainAd } from './adapter.ts';

type EventSearch = { contractAddress: string; event: BridgeEventName; topics: EventTopics; since: Date };

/** A relayer request as the chain knows it. */
export interface IssuedRequest {
  /** The contract the request names. */
  contractAddress: string;
  action: ActionName;
  reqHash: string;
  authToken: string;
  /** No earlier than the request was signed: where a search for its transaction starts. */
  since: Date;
}

/**
 * Reads contract state, for the moments no client reports anything: a hold about to be given
 * back, the periodic audit. Every answer comes from the chain's latest state, agreed by its quorum of
 * providers; `undefined` means the chain cannot tell now (unreachable, providers disagree, or no view
 * for it on this chain kind), which callers treat as "do nothing irreversible".
 */
export interface ChainStateReader {
  /** Whether the request was carried out on chain (EVM: its authToken is spent; Stellar: its event exists). */
  requestExecuted(chain: ChainTarget, request: IssuedRequest): Promise<boolean | undefined>;
  /** The transaction that carried the request out, when the chain's logs can still find it. */
  findRequestTransaction(chain: ChainTarget, request: IssuedRequest): Promise<string | undefined>;
  /**
   * The transaction in which `contractAddress` emitted `event` with the indexed `topics` (key:
   * adId or orderHash; reqHash), searched from `since`: for a trade step nobody reported.
   */
  findEventTransaction(
    chain: ChainTarget,
    search: { contractAddress: string; event: BridgeEventName; topics: EventTopics; since: Date },
  ): Promise<string | undefined>;
  /** The ad's balances on its AdManager (EVM: its `ads` getter; Stellar: the Soroban AdManager's `ad` view). */
  ad(chain: ChainTarget, adManager: string, adId: string): Promise<OnChainAd | undefined>;
  /** An order's state number on a contract (chains/evm/state.ts `evmOrderState`; Stellar: `order_state`, numbered alike). */
  orderState(chain: ChainTarget, contract: string, orderHash: string): Promise<number | undefined>;
  /**
   * The chain's time, unix seconds, as its contracts compare deadlines with it: EVM the timestamp of
   * the newest block `chain.confirmations` deep (no later block is stamped earlier), Stellar the
   * latest ledger's close time (ledgers are final).
   */
  finalTime(chain: ChainTarget): Promise<bigint | undefined>;
}

/** A reader over `chains` (one set of providers per chain for the life of `chains`). */
export function createChainStateReader(chains: Chains = createChains()): ChainStateReader {
  // The chain cannot tell now (no provider answers, too few agree, they disagree): nothing to act on.
  const soft = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      if (error instanceof ChainVerificationError && error.retryable) return undefined;
      throw error;
    }
  };
  const find = (chain: ChainTarget, search: EventSearch) => chains.of(chain).findEventTransaction(search);
  return {
    requestExecuted: (chain, request) => soft(() => chains.of(chain).requestExecuted(request)),
    async findRequestTransaction(chain, request) {
      const search = { contractAddress: request.contractAddress, event: eventOf(request.action), topics: { reqHash: request.reqHash }, since: request.since };
      return (await soft(() => find(chain, search))) ?? undefined;
    },
    async findEventTransaction(chain, search) {
      return (await soft(() => find(chain, search))) ?? undefined;
    },
    ad: (chain, adManager, adId) => soft(() => chains.of(chain).ad(adManager, adId)),
    orderState: (chain, contract, orderHash) => soft(() => chains.of(chain).orderState(contract, orderHash)),
    finalTime: (chain) => soft(() => chains.of(chain).finalTime()),
  };
}

/**
 * Asks `chain` through `reader` whether a relayer request was carried out, for a hold about to be
 * given back (db `expireAdRequests`). A request is signed at most `signedRequestTtlSeconds` before
 * its deadline: a log search starts there. A chain without a provider cannot tell.
 */
export function requestExecutedCheck(
  reader: ChainStateReader,
  chain: ChainTarget,
  signedRequestTtlSeconds: number,
): (request: Omit<IssuedRequest, 'since'> & { deadline: Date }) => Promise<boolean | undefined> {
  return async (request) => {
    if (!chain.rpcUrl && !chain.rpcUrls?.length) return undefined;
    return reader.requestExecuted(chain, {
      contractAddress: request.contractAddress, action: request.action, reqHash: request.reqHash, authToken: request.authToken,
      since: new Date(request.deadline.getTime() - signedRequestTtlSeconds * 1000),
    });
  };
}
