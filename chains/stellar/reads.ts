import { TransactionBuilder, type rpc } from '@stellar/stellar-sdk';
import type { ChainFacts, ChainReads, VerifiedAction } from '../adapter.ts';
import { EVENT_OF_ACTION } from '../evm/abi.ts';
import { RpcUnavailableError } from '../errors.ts';
import { eventOf } from '../event-of.ts';
import type { Providers } from '../providers/providers.ts';
import { verifiedKey } from '../verified-key.ts';
import { stellarRecipientProblem, type StellarTokenKind } from './recipient.ts';
import { findStellarEventTransaction } from './state.ts';
import { syncStellarTree } from './tree-sync.ts';
import { stellarVerifierDifferences } from './verifier-key.ts';
import { isStellarLedgerCanonical, readStellarTransactionEvents, verifyStellarTransaction, type VerifiedStellarEvent } from './verify.ts';
import { readStellarDepositFunding, readStellarPortalOrderState, stellarAdState, stellarLatestTime, stellarOrderState } from './views.ts';

/** A Stellar chain's reads through its providers: transactions, events and contract views as facts. */
export function stellarReads(chain: ChainFacts, providers: Providers<rpc.Server>): ChainReads {
  const confirmations = chain.confirmations ?? 1;
  const toAction = (verified: VerifiedStellarEvent): VerifiedAction => {
    const { txHash, logIndex, blockHash, from, event, args } = verified;
    return { chainId: chain.chainId, txHash, logIndex, block: String(verified.ledger), blockHash, from, event, args, confirmations: verified.confirmations };
  };
  // A token contract's kind (SAC of XLM, of a classic asset, or its own wasm) never changes.
  const tokenKinds = new Map<string, StellarTokenKind>();
  const find = (contract: string, event: Parameters<typeof findStellarEventTransaction>[2], topics: { key?: string; reqHash?: string }, since: Date) =>
    providers.fact('getEvents', (server) => findStellarEventTransaction(server, contract, event, topics, since));
  return {
    verify(expected) {
      return providers.fact('verify', async (server) => toAction(await verifyStellarTransaction(server, {
        txHash: expected.txHash, contractId: expected.contractAddress, event: eventOf(expected.action), args: expected.args, confirmations,
      })), verifiedKey);
    },
    events(ref) {
      return providers.fact('events', async (server) => (await readStellarTransactionEvents(server, {
        txHash: ref.txHash, contractId: ref.contractAddress, confirmations,
      })).map(toAction), (events) => events.map(verifiedKey).join('|'));
    },
    includedEvents(ref) {
      return providers.read('includedEvents', async (server) => (await readStellarTransactionEvents(server, {
        txHash: ref.txHash, contractId: ref.contractAddress, confirmations: 1,
      })).map(toAction));
    },
    isCanonical(ref) {
      return providers.fact('isCanonical', (server) => isStellarLedgerCanonical(server, Number(ref.block), ref.blockHash));
    },
    async requestExecuted(request) {
      // Soroban contracts expose no spent-token view: the request's own event answers instead.
      const found = await find(request.contractAddress, EVENT_OF_ACTION[request.action], { reqHash: request.reqHash }, request.since);
      return found === undefined ? undefined : found !== null;
    },
    findEventTransaction({ contractAddress, event, topics, since }) {
      return find(contractAddress, event, topics, since);
    },
    ad(adManager, adId) {
      return providers.fact('ad', (server) => stellarAdState(server, adManager, adId));
    },
    orderState(contract, orderHash) {
      return providers.fact('orderState', (server) => stellarOrderState(server, contract, orderHash));
    },
    finalTime() {
      return providers.read('latestLedger', stellarLatestTime);
    },
    depositFunding(token, owner) {
      return providers.fact('balance', (server) => readStellarDepositFunding(server, token, owner));
    },
    portalOrderState(portal, orderHash) {
      return providers.fact('portalOrderState', (server) => readStellarPortalOrderState(server, portal, orderHash));
    },
    recipientProblem(token, recipient, amount) {
      return providers.fact('recipient', (server) => stellarRecipientProblem(server, token, recipient, amount, tokenKinds));
    },
    syncOrderTree(store, key, treeDiffers, known) {
      return syncStellarTree({ store, key, providers, treeDiffers, known });
    },
    async verifierDifferences(contracts, vk) {
      const differences: string[] = [];
      for (const { role, address } of contracts) {
        const difference = await providers.fact('verificationKey', (server) => stellarVerifierDifferences(server, role, address, vk));
        if (difference) differences.push(difference);
      }
      return differences;
    },
    sendTransaction(signed) {
      if (!chain.networkPassphrase) throw new RpcUnavailableError(`chain ${chain.chainId} has no network passphrase registered`);
      const passphrase = chain.networkPassphrase;
      return providers.read('sendTransaction', async (server) => {
        try {
          return (await server.sendTransaction(TransactionBuilder.fromXDR(signed, passphrase))).hash;
        } catch (error) {
          throw new RpcUnavailableError(`Soroban RPC failed on sendTransaction: ${(error as Error).message}`, { cause: error });
        }
      });
    },
  };
}
