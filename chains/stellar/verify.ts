import { Address, StrKey, rpc, xdr } from '@stellar/stellar-sdk';
import type { BridgeEventName } from '../evm/abi.ts';
import {
  assertFinal,
  RpcUnavailableError,
  TransactionFailedError,
  TransactionNotFoundError,
  WrongContractError,
  WrongEventError,
} from '../errors.ts';
import { assertBindingArgs, assertConfirmations, sameArgValue } from '../event-args.ts';
import { contractEventsOfMeta, decodeBridgeEvent } from './events.ts';

/** A Soroban RPC client for one Stellar network (`allowHttp` only for loopback test servers). */
export function createStellarClient(rpcUrl: string): rpc.Server {
  return new rpc.Server(rpcUrl, { allowHttp: rpcUrl.startsWith('http://') });
}

/** What a reported Stellar transaction must show. */
export interface ExpectedStellarTransaction {
  /** 64 hex digits, no 0x (Stellar's spelling); a 0x prefix is accepted and dropped. */
  txHash: string;
  /** The AdManager or OrderPortal contract (C...). */
  contractId: string;
  event: BridgeEventName;
  /** Arguments that must match, by name (reqHash, adId, orderHash or data fields). */
  args: Record<string, string | bigint>;
  /** Closed ledgers required, counting the including ledger; 1 suffices (Stellar ledgers are final once closed); at least 1. */
  confirmations: number;
}

/**
 * A verified Stellar event. `(txHash, logIndex)` names it uniquely on its network; `blockHash` is the
 * hash of the including ledger (Soroban RPC `getLedgers`), which `isStellarLedgerCanonical` re-checks.
 */
export interface VerifiedStellarEvent {
  txHash: string;
  ledger: number;
  /** The including ledger's hash, 0x hex. */
  blockHash: string;
  /** The event's index among the transaction's contract events. */
  logIndex: number;
  /** The transaction's source account (G...). */
  from: string;
  event: BridgeEventName;
  args: Record<string, string>;
  confirmations: number;
}

/** Where to read a reported Stellar transaction's events. */
export type StellarTransactionRef = Omit<ExpectedStellarTransaction, 'event' | 'args'>;

/**
 * The Stellar counterpart of `verifyEvmTransaction`, through Soroban RPC `getTransaction`: the
 * transaction succeeded, invoked (or emitted from) the expected contract, emitted the expected
 * event with the expected arguments (layout in chains/stellar/events.ts) and its ledger has the
 * required confirmations. When the transaction carries several events of that name, the one whose
 * arguments match is returned with its own index. Same typed errors. A transaction submitted but
 * not yet in a closed ledger reads as not found: clients confirm after their submission returned SUCCESS.
 */
export async function verifyStellarTransaction(
  server: rpc.Server,
  expected: ExpectedStellarTransaction,
): Promise<VerifiedStellarEvent> {
  assertBindingArgs(expected.args);
  const events = await readStellarTransactionEvents(server, expected);
  const match = events.find(
    (event) =>
      event.event === expected.event &&
      Object.entries(expected.args).every(([name, value]) => sameArgValue(event.args[name], value)),
  );
  if (!match) {
    throw new WrongEventError(`transaction ${events[0]?.txHash ?? expected.txHash} emitted no ${expected.event} ` +
      `from ${expected.contractId} with the expected arguments`);
  }
  return match;
}

/**
 * Every bridge event the contract emitted in the transaction, each with its index among the
 * transaction's contract events, once the transaction succeeded in a closed ledger with the
 * required confirmations. The caller picks the event of its subject (a transaction may carry
 * several). Same errors as `verifyStellarTransaction` except `WrongEventError`.
 */
export async function readStellarTransactionEvents(server: rpc.Server, expected: StellarTransactionRef): Promise<VerifiedStellarEvent[]> {
  assertConfirmations(expected.confirmations);
  const txHash = expected.txHash.replace(/^0x/, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(txHash)) throw new TransactionNotFoundError(`not a Stellar transaction hash: '${expected.txHash}'`);
  let response: rpc.Api.GetTransactionResponse;
  try {
    response = await server.getTransaction(txHash);
  } catch (error) {
    throw new RpcUnavailableError(`Soroban RPC failed on getTransaction: ${(error as Error).message}`, { cause: error });
  }
  if (response.status === rpc.Api.GetTransactionStatus.NOT_FOUND) {
    throw new TransactionNotFoundError(`transaction ${txHash} not found (or older than the RPC's retention window)`);
  }
  if (response.status === rpc.Api.GetTransactionStatus.FAILED) {
    throw new TransactionFailedError(`transaction ${txHash} failed: ${response.resultXdr.result().switch().name}`);
  }

  const invoked = invokedContracts(response.envelopeXdr);
  // The response's own event list when the RPC gives one, else the meta's: one list, so an index is stable.
  const listed = response.events?.contractEventsXdr?.flat() ?? [];
  const all = (listed.length > 0 ? listed : contractEventsOfMeta(response.resultMetaXdr)).map(decodeBridgeEvent);
  const ours = all
    .map((event, index) => ({ event, index }))
    .filter((entry): entry is { event: NonNullable<typeof entry.event>; index: number } => entry.event?.contractId === expected.contractId);
  if (ours.length === 0 && !invoked.includes(expected.contractId)) {
    throw new WrongContractError(`transaction ${txHash} invoked ${invoked.join(', ') || 'no contract'}, not ${expected.contractId}`);
  }
  const confirmations = response.latestLedger - response.ledger + 1;
  assertFinal(txHash, confirmations, expected.confirmations);
  const blockHash = await ledgerHash(server, response.ledger);
  if (!blockHash) throw new RpcUnavailableError(`Soroban RPC has no ledger ${response.ledger} in getLedgers`);
  const from = sourceAccount(response.envelopeXdr);
  return ours.map(({ event, index }) => ({
    txHash,
    ledger: response.ledger,
    blockHash,
    logIndex: index,
    from,
    event: event.event as BridgeEventName,
    args: event.args,
    confirmations,
  }));
}

/**
 * Whether ledger `sequence` still has `hash`. Stellar's consensus (SCP) closes ledgers final, so this
 * is false only if the RPC serves another network or history was rewritten; a ledger outside the
 * RPC's retention window reads as unknown and is reported canonical (nothing can have replaced it).
 * Throws `RpcUnavailableError`.
 */
export async function isStellarLedgerCanonical(server: rpc.Server, sequence: number, hash: string): Promise<boolean> {
  const found = await ledgerHash(server, sequence);
  return found === undefined || found === hash.toLowerCase();
}

/**
 * The hash of ledger `sequence` (0x hex), undefined when the RPC no longer keeps it. Raw JSON-RPC
 * `getLedgers`: only `hash` and `sequence` are read, so the ledger's header and meta XDR are not decoded.
 */
async function ledgerHash(server: rpc.Server, sequence: number): Promise<string | undefined> {
  let body: { result?: { ledgers?: { hash?: string; sequence?: number }[] }; error?: { code?: number; message?: string } };
  try {
    const response = await fetch(server.serverURL.toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLedgers', params: { startLedger: sequence, pagination: { limit: 1 } } }),
      signal: AbortSignal.timeout(15_000),
    });
    body = (await response.json()) as typeof body;
  } catch (error) {
    throw new RpcUnavailableError(`Soroban RPC failed on getLedgers: ${(error as Error).message}`, { cause: error });
  }
  if (body.error) {
    // Soroban RPC answers -32600 "startLedger must be between the oldest ledger ... and the latest" outside retention.
    if (/must be between/i.test(body.error.message ?? '')) return undefined;
    throw new RpcUnavailableError(`Soroban RPC failed on getLedgers: ${body.error.message ?? body.error.code}`);
  }
  const ledger = body.result?.ledgers?.find((entry) => entry.sequence === sequence);
  return ledger?.hash ? `0x${ledger.hash.replace(/^0x/, '').toLowerCase()}` : undefined;
}

function innerTransaction(envelope: xdr.TransactionEnvelope): xdr.Transaction | null {
  switch (envelope.switch()) {
    case xdr.EnvelopeType.envelopeTypeTx():
      return envelope.v1().tx();
    case xdr.EnvelopeType.envelopeTypeTxFeeBump():
      return envelope.feeBump().tx().innerTx().v1().tx();
    default:
      return null;
  }
}

/** Contracts the transaction's InvokeHostFunction operations call directly. */
function invokedContracts(envelope: xdr.TransactionEnvelope): string[] {
  const tx = innerTransaction(envelope);
  if (!tx) return [];
  const contracts: string[] = [];
  for (const operation of tx.operations()) {
    if (operation.body().switch() !== xdr.OperationType.invokeHostFunction()) continue;
    const fn = operation.body().invokeHostFunctionOp().hostFunction();
    if (fn.switch() !== xdr.HostFunctionType.hostFunctionTypeInvokeContract()) continue;
    contracts.push(Address.fromScAddress(fn.invokeContract().contractAddress()).toString());
  }
  return contracts;
}

function sourceAccount(envelope: xdr.TransactionEnvelope): string {
  const tx = innerTransaction(envelope);
  if (!tx) return '';
  const source = tx.sourceAccount();
  const key = source.switch() === xdr.CryptoKeyType.keyTypeMuxedEd25519() ? source.med25519().ed25519() : source.ed25519();
  return StrKey.encodeEd25519PublicKey(key);
}
