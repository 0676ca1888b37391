import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Account, type Keypair, Operation, TransactionBuilder, xdr } from '@stellar/stellar-sdk';

/**
 * Real Stellar XDR for tests: the contract events deploy/soroban's contracts emitted in the
 * Soroban host, a signed InvokeHostFunction envelope, its TransactionResult and a
 * TransactionMeta carrying contract events, and the raw `getTransaction` result Soroban RPC
 * returns for them.
 */

export const TEST_PASSPHRASE = 'Test SDF Network ; September 2015';

/** One contract event the reference Soroban contracts emitted in the real Soroban host. */
export interface HostEventFixture {
  /** The service action whose request the call carried (chains/request-schema.ts). */
  action: string;
  /** The contract function called. */
  function: string;
  contractId: string;
  event: string;
  reqHash: string;
  /** adId or orderHash (topic 2). */
  key: string;
  xdr: xdr.ContractEvent;
}

const EVENTS_FILE = fileURLToPath(new URL('../../deploy/soroban/fixtures/events.json', import.meta.url));

/**
 * Every event of one whole run of deploy/soroban's AdManager and OrderPortal for
 * deploy/soroban/vectors.json, in call order, as the Soroban host serialised it
 * (deploy/soroban/fixtures/events.json, written and checked by `cargo test`).
 */
export function hostEvents(): HostEventFixture[] {
  const file = JSON.parse(readFileSync(EVENTS_FILE, 'utf8')) as { events: Array<Omit<HostEventFixture, 'xdr'> & { xdr: string }> };
  return file.events.map((event) => ({ ...event, xdr: xdr.ContractEvent.fromXDR(Buffer.from(event.xdr, 'hex')) }));
}

/** The `nth` (0-based) host event named `event`; throws when there is none. */
export function hostEvent(event: string, nth = 0): HostEventFixture {
  const found = hostEvents().filter((e) => e.event === event)[nth];
  if (!found) throw new Error(`deploy/soroban/fixtures/events.json has no ${event} #${nth}`);
  return found;
}

/** A signed transaction calling `fn` on `contractId`; returns its hash and base64 envelope. */
export function invokeEnvelope(source: Keypair, contractId: string, fn: string): { hash: string; envelopeXdr: string } {
  const tx = new TransactionBuilder(new Account(source.publicKey(), '41'), { fee: '100', networkPassphrase: TEST_PASSPHRASE })
    .addOperation(Operation.invokeContractFunction({ contract: contractId, function: fn, args: [] }))
    .setTimeout(60)
    .build();
  tx.sign(source);
  return { hash: tx.hash().toString('hex'), envelopeXdr: tx.toEnvelope().toXDR('base64') };
}

/** A TransactionResult: success, or failure with the host function trapped. */
export function transactionResult(success: boolean): string {
  const inner = success
    ? xdr.InvokeHostFunctionResult.invokeHostFunctionSuccess(Buffer.alloc(32))
    : xdr.InvokeHostFunctionResult.invokeHostFunctionTrapped();
  const operations = [xdr.OperationResult.opInner(xdr.OperationResultTr.invokeHostFunction(inner))];
  return new xdr.TransactionResult({
    feeCharged: xdr.Int64.fromString('100'),
    result: success ? xdr.TransactionResultResult.txSuccess(operations) : xdr.TransactionResultResult.txFailed(operations),
    ext: new xdr.TransactionResultExt(0),
  }).toXDR('base64');
}

/** TransactionMeta carrying `events`: v3 (Soroban meta events) or v4 (per-operation events, protocol 23). */
export function transactionMeta(events: xdr.ContractEvent[], version: 3 | 4): string {
  if (version === 3) {
    return new xdr.TransactionMeta(
      3,
      new xdr.TransactionMetaV3({
        ext: new xdr.ExtensionPoint(0),
        txChangesBefore: [],
        operations: [new xdr.OperationMeta({ changes: [] })],
        txChangesAfter: [],
        sorobanMeta: new xdr.SorobanTransactionMeta({
          ext: new xdr.SorobanTransactionMetaExt(0),
          events,
          returnValue: xdr.ScVal.scvVoid(),
          diagnosticEvents: [],
        }),
      }),
    ).toXDR('base64');
  }
  return new xdr.TransactionMeta(
    4,
    new xdr.TransactionMetaV4({
      ext: new xdr.ExtensionPoint(0),
      txChangesBefore: [],
      operations: [new xdr.OperationMetaV2({ ext: new xdr.ExtensionPoint(0), changes: [], events })],
      txChangesAfter: [],
      sorobanMeta: new xdr.SorobanTransactionMetaV2({ ext: new xdr.SorobanTransactionMetaExt(0), returnValue: xdr.ScVal.scvVoid() }),
      events: [],
      diagnosticEvents: [],
    }),
  ).toXDR('base64');
}

/** The raw `getTransaction` result of Soroban RPC for a transaction in `ledger`. */
export function getTransactionResult(options: {
  status: 'SUCCESS' | 'FAILED';
  envelopeXdr: string;
  resultXdr: string;
  resultMetaXdr: string;
  ledger: number;
  latestLedger: number;
}): Record<string, unknown> {
  return {
    status: options.status,
    latestLedger: options.latestLedger,
    latestLedgerCloseTime: '1700000100',
    oldestLedger: 1,
    oldestLedgerCloseTime: '1690000000',
    applicationOrder: 1,
    feeBump: false,
    envelopeXdr: options.envelopeXdr,
    resultXdr: options.resultXdr,
    resultMetaXdr: options.resultMetaXdr,
    ledger: options.ledger,
    createdAt: '1700000000',
  };
}

