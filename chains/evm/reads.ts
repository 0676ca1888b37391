import type { Web3 } from 'web3';
import type { ChainFacts, ChainReads, VerifiedAction } from '../adapter.ts';
import { RpcUnavailableError } from '../errors.ts';
import type { Providers } from '../providers/providers.ts';
import { uuidToBytes32 } from '../address.ts';
import { verifiedKey } from '../verified-key.ts';
import { eventOf } from '../event-of.ts';
import { readEvmDepositFunding, readEvmPortalOrderState } from './order-chain-reads.ts';
import { rpcCall } from './rpc.ts';
import { evmAdState, evmAuthTokenSpent, evmBlockAtOrAfter, evmFinalTime, evmOrderState, findEvmEventTransaction } from './state.ts';
import { syncEvmTree } from './tree-sync.ts';
import { evmVerifierDifferences } from './verifier-code.ts';
import { isEvmBlockCanonical, readEvmTransactionEvents, verifyEvmTransaction, type VerifiedEvmEvent } from './verify.ts';

/** An EVM chain's reads through its providers: receipts, logs and contract state as facts, heads by failover. */
export function evmReads(chain: ChainFacts, providers: Providers<Web3>): ChainReads {
  const confirmations = chain.confirmations ?? 1;
  const toAction = (verified: VerifiedEvmEvent): VerifiedAction => {
    // The registry's id must be the node's: a provider pointing at another chain proves nothing.
    if (verified.chainId !== chain.chainId) throw new RpcUnavailableError(`a provider of chain ${chain.chainId} serves chain ${verified.chainId}`);
    const { txHash, logIndex, blockHash, from, event, args } = verified;
    return {
      chainId: chain.chainId, txHash, logIndex, block: verified.blockNumber.toString(), blockHash, from, event, args,
      confirmations: verified.confirmations,
    };
  };
  const treeMarks = new WeakMap<object, Map<string, bigint>>();
  return {
    verify(expected) {
      const event = eventOf(expected.action);
      return providers.fact('verify', async (web3) => toAction(await verifyEvmTransaction(web3, {
        txHash: expected.txHash, contractAddress: expected.contractAddress, event, args: expected.args, confirmations, finality: chain.finality,
      })), verifiedKey);
    },
    events(ref) {
      return providers.fact('events', async (web3) => (await readEvmTransactionEvents(web3, {
        txHash: ref.txHash, contractAddress: ref.contractAddress, confirmations, finality: chain.finality,
      })).map(toAction), (events) => events.map(verifiedKey).join('|'));
    },
    includedEvents(ref) {
      return providers.read('includedEvents', async (web3) => (await readEvmTransactionEvents(web3, {
        txHash: ref.txHash, contractAddress: ref.contractAddress, confirmations: 1, finality: 'depth',
      })).map(toAction));
    },
    isCanonical(ref) {
      return providers.fact('isCanonical', (web3) => isEvmBlockCanonical(web3, BigInt(ref.block), ref.blockHash));
    },
    requestExecuted(request) {
      return providers.fact('authTokenSpent', (web3) => evmAuthTokenSpent(web3, request.contractAddress, request.authToken));
    },
    async findEventTransaction({ contractAddress, event, topics, since }) {
      const from = await providers.read('blockAtOrAfter', (web3) => evmBlockAtOrAfter(web3, Math.floor(since.getTime() / 1000)));
      return (await providers.fact('getLogs', (web3) => findEvmEventTransaction(web3, contractAddress, event, topics, from))) ?? null;
    },
    ad(adManager, adId) {
      return providers.fact('ad', (web3) => evmAdState(web3, adManager, uuidToBytes32(adId)));
    },
    orderState(contract, orderHash) {
      return providers.fact('orderState', (web3) => evmOrderState(web3, contract, orderHash));
    },
    finalTime() {
      return providers.read('finalTime', (web3) => evmFinalTime(web3, chain.confirmations));
    },
    depositFunding(token, owner, portal) {
      return providers.fact('depositFunding', (web3) => readEvmDepositFunding(web3, token, owner, portal));
    },
    portalOrderState(portal, orderHash) {
      return providers.fact('portalOrderState', (web3) => readEvmPortalOrderState(web3, portal, orderHash));
    },
    async recipientProblem() {
      return null; // any EVM address can be paid
    },
    syncOrderTree(store, key, treeDiffers, known) {
      const marks = treeMarks.get(store) ?? new Map<string, bigint>();
      treeMarks.set(store, marks);
      return syncEvmTree({ store, key, providers, marks, treeDiffers, known });
    },
    async verifierDifferences(contracts, vk) {
      const differences: string[] = [];
      for (const { role, address } of contracts) {
        const difference = await providers.fact('verifierCode', (web3) => evmVerifierDifferences(web3, role, address, vk));
        if (difference) differences.push(difference);
      }
      return differences;
    },
    sendTransaction(signed) {
      return providers.read('sendRawTransaction', async (web3) => {
        const hash = await rpcCall('eth_sendRawTransaction', () => web3.requestManager.send({ method: 'eth_sendRawTransaction', params: [signed] }));
        return String(hash);
      });
    },
  };
}
