import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Account, type Keypair, Operation, StrKey, TransactionBuilder, nativeToScVal, xdr } from '@stellar/stellar-sdk';

/**
 * Real Stellar XDR for tests: the contract events contracts/soroban's contracts emitted in the
 * Soroban host, a builder of events in exactly their layout (for tests that need other values), a signed InvokeHostFunction envelope, its TransactionResult and a
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

const EVENTS_FILE = fileURLToPath(new URL('../../contracts/soroban/fixtures/events.json', import.meta.url));

/**
 * Every event of one whole run of contracts/soroban's AdManager and OrderPortal for
 * contracts/soroban/vectors.json, in call order, as the Soroban host serialised it
 * (contracts/soroban/fixtures/events.json, written and checked by `cargo test`).
 */
export function hostEvents(): HostEventFixture[] {
  const file = JSON.parse(readFileSync(EVENTS_FILE, 'utf8')) as { events: Array<Omit<HostEventFixture, 'xdr'> & { xdr: string }> };
  return file.events.map((event) => ({ ...event, xdr: xdr.ContractEvent.fromXDR(Buffer.from(event.xdr, 'hex')) }));
}

/** The `nth` (0-based) host event named `event`; throws when there is none. */
export function hostEvent(event: string, nth = 0): HostEventFixture {
  const found = hostEvents().filter((e) => e.event === event)[nth];
  if (!found) throw new Error(`contracts/soroban/fixtures/events.json has no ${event} #${nth}`);
  return found;
}

/**
 * The data fields of each event the service reads, with the ScVal type the contracts give them
 * (contracts/soroban/shared/src/events.rs). stellar-fixtures.test.ts rebuilds every host event with
 * `hostLayoutEvent` and requires the same XDR bytes.
 */
export const HOST_EVENT_FIELDS = {
  AdCreated: { creator: 'address', token: 'address', amount: 'i128', orderChainId: 'u256', adRecipient: 'bytes' },
  AdFunded: { amount: 'i128', available: 'i128' },
  AdWithdrawn: { amount: 'i128', to: 'address' },
  AdClosed: { amount: 'i128', to: 'address' },
  OrderLocked: { adId: 'bytes', amount: 'i128' },
  OrderCreated: { leafIndex: 'u32', leaf: 'u256', secretCommitment: 'u256', root: 'u256' },
  OrderUnlocked: { nullifierHash: 'u256', recipient: 'address', amount: 'i128' },
} as const;

export type HostEventName = keyof typeof HOST_EVENT_FIELDS;

/** A data value: a G.../C... address, 0x hex bytes, or an integer. */
export type HostEventValue = string | bigint | number;

/**
 * A contract event as the reference Soroban contracts emit `event`: topics `[Symbol(event),
 * BytesN<32> reqHash, BytesN<32> key]`, data the map of exactly the event's fields, keys in the
 * host's (sorted) order. For tests that need values no recorded run has (another reqHash, adId, amount).
 */
export function hostLayoutEvent<E extends HostEventName>(
  contractId: string,
  event: E,
  reqHash: string,
  key: string,
  data: Record<keyof (typeof HOST_EVENT_FIELDS)[E], HostEventValue>,
): xdr.ContractEvent {
  const types = HOST_EVENT_FIELDS[event] as Record<string, string>;
  const given = data as Record<string, HostEventValue>;
  const names = Object.keys(types);
  const extra = Object.keys(given).filter((name) => !(name in types));
  const missing = names.filter((name) => !(name in given));
  if (extra.length + missing.length > 0) throw new Error(`${event} data: missing [${missing}], unknown [${extra}]`);
  const bytes = (hex: string) => xdr.ScVal.scvBytes(Buffer.from(hex.replace(/^0x/, ''), 'hex'));
  const value = (name: string): xdr.ScVal => {
    const type = types[name]!;
    const v = given[name]!;
    if (type === 'bytes') return bytes(String(v));
    if (type === 'address') return nativeToScVal(String(v), { type: 'address' });
    return nativeToScVal(type === 'u32' ? Number(v) : BigInt(v), { type });
  };
  // The host keeps a map's symbol keys sorted.
  const entries = names
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((name) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(name), val: value(name) }));
  return new xdr.ContractEvent({
    ext: new xdr.ExtensionPoint(0),
    contractId: StrKey.decodeContract(contractId) as unknown as xdr.Hash,
    type: xdr.ContractEventType.contract(),
    body: new xdr.ContractEventBody(
      0,
      new xdr.ContractEventV0({ topics: [xdr.ScVal.scvSymbol(event), bytes(reqHash), bytes(key)], data: xdr.ScVal.scvMap(entries) }),
    ),
  });
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

