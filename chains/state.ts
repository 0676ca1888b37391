import { uuidToBytes32 } from './address.ts';
import { EVENT_OF_ACTION } from './evm/abi.ts';
import type { BridgeEventName } from './evm/abi.ts';
import {
  evmAdState,
  evmAuthTokenSpent,
  evmBlockAtOrAfter,
  evmFinalTime,
  evmOrderState,
  findEvmEventTransaction,
  type EvmAdState,
  type EventTopics,
} from './evm/state.ts';
import { RpcUnavailableError } from './errors.ts';
import type { ActionName } from './request-schema.ts';
import { findStellarEventTransaction } from './stellar/state.ts';
import { stellarAdState, stellarLatestTime, stellarOrderState } from './stellar/views.ts';
import { cachedChainClients, defaultChainClients, type ChainClientFactory, type VerifiableChain } from './verify.ts';

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

/** An ad as its AdManager holds it. */
export type OnChainAd = EvmAdState;

/**
 * Reads contract state, for the moments no client reports anything: a hold about to be given
 * back, the periodic audit. Every answer comes from the chain's latest state; `undefined` means the
 * chain cannot tell now (unreachable, or no view for it on this chain kind), which callers treat
 * as "do nothing irreversible".
 */
export interface ChainStateReader {
  /** Whether the request was carried out on chain (EVM: its authToken is spent; Stellar: its event exists). */
  requestExecuted(chain: VerifiableChain, request: IssuedRequest): Promise<boolean | undefined>;
  /** The transaction that carried the request out, when the chain's logs can still find it. */
  findRequestTransaction(chain: VerifiableChain, request: IssuedRequest): Promise<string | undefined>;
  /**
   * The transaction in which `contractAddress` emitted `event` with the indexed `topics` (key:
   * adId or orderHash; reqHash), searched from `since`: for a trade step nobody reported.
   */
  findEventTransaction(
    chain: VerifiableChain,
    search: { contractAddress: string; event: BridgeEventName; topics: EventTopics; since: Date },
  ): Promise<string | undefined>;
  /** The ad's balances on its AdManager (EVM: its `ads` getter; Stellar: the Soroban AdManager's `ad` view). */
  ad(chain: VerifiableChain, adManager: string, adId: string): Promise<OnChainAd | undefined>;
  /** An order's state number on a contract (chains/evm/state.ts `evmOrderState`; Stellar: `order_state`, numbered alike). */
  orderState(chain: VerifiableChain, contract: string, orderHash: string): Promise<number | undefined>;
  /**
   * The chain's time, unix seconds, as its contracts compare deadlines with it: EVM the timestamp of
   * the newest block `chain.confirmations` deep (no later block is stamped earlier), Stellar the
   * latest ledger's close time (ledgers are final).
   */
  finalTime(chain: VerifiableChain): Promise<bigint | undefined>;
}

/** A reader whose RPC clients come from `clients`, one per endpoint for the life of the reader. */
export function createChainStateReader(clients: ChainClientFactory = defaultChainClients): ChainStateReader {
  const client = cachedChainClients(clients);
  const soft = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      if (error instanceof RpcUnavailableError) return undefined;
      throw error;
    }
  };
  async function search(
    chain: VerifiableChain,
    contract: string,
    event: BridgeEventName,
    topics: EventTopics,
    since: Date,
  ): Promise<string | null | undefined> {
    if (chain.kind === 'EVM') {
      const web3 = client.evm(chain.rpcUrl);
      const from = await evmBlockAtOrAfter(web3, Math.floor(since.getTime() / 1000));
      return (await findEvmEventTransaction(web3, contract, event, topics, from)) ?? null;
    }
    return findStellarEventTransaction(client.stellar(chain.rpcUrl), contract, event, topics, since);
  }
  const find = (chain: VerifiableChain, request: IssuedRequest) =>
    search(chain, request.contractAddress, EVENT_OF_ACTION[request.action], { reqHash: request.reqHash }, request.since);
  return {
    async requestExecuted(chain, request) {
      if (chain.kind === 'EVM') return soft(() => evmAuthTokenSpent(client.evm(chain.rpcUrl), request.contractAddress, request.authToken));
      // Soroban contracts expose no spent-token view: the request's own event answers instead.
      const found = await soft(() => find(chain, request));
      return found === undefined ? undefined : found !== null;
    },
    async findRequestTransaction(chain, request) {
      return (await soft(() => find(chain, request))) ?? undefined;
    },
    async findEventTransaction(chain, { contractAddress, event, topics, since }) {
      return (await soft(() => search(chain, contractAddress, event, topics, since))) ?? undefined;
    },
    async ad(chain, adManager, adId) {
      if (chain.kind === 'STELLAR') return soft(() => stellarAdState(client.stellar(chain.rpcUrl), adManager, adId));
      return soft(() => evmAdState(client.evm(chain.rpcUrl), adManager, uuidToBytes32(adId)));
    },
    async orderState(chain, contract, orderHash) {
      if (chain.kind === 'STELLAR') return soft(() => stellarOrderState(client.stellar(chain.rpcUrl), contract, orderHash));
      return soft(() => evmOrderState(client.evm(chain.rpcUrl), contract, orderHash));
    },
    async finalTime(chain) {
      if (chain.kind === 'STELLAR') return soft(() => stellarLatestTime(client.stellar(chain.rpcUrl)));
      return soft(() => evmFinalTime(client.evm(chain.rpcUrl), chain.confirmations));
    },
  };
}

/**
 * Asks `chain` through `reader` whether a relayer request was carried out, for a hold about to be
 * given back (db `expireAdRequests`). A request is signed at most `signedRequestTtlSeconds` before
 * its deadline: a log search starts there. A chain without an RPC URL cannot tell.
 */
export function requestExecutedCheck(
  reader: ChainStateReader,
  chain: { kind: VerifiableChain['kind']; chainId: string; rpcUrl?: string | null; confirmations?: number },
  signedRequestTtlSeconds: number,
): (request: Omit<IssuedRequest, 'since'> & { deadline: Date }) => Promise<boolean | undefined> {
  return async (request) => {
    if (!chain.rpcUrl) return undefined;
    return reader.requestExecuted(
      { kind: chain.kind, chainId: chain.chainId, rpcUrl: chain.rpcUrl, confirmations: chain.confirmations },
      {
        contractAddress: request.contractAddress, action: request.action, reqHash: request.reqHash, authToken: request.authToken,
        since: new Date(request.deadline.getTime() - signedRequestTtlSeconds * 1000),
      },
    );
  };
}
