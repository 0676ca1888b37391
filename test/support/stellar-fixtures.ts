import {
  Account,
  type Keypair,
  Operation,
  StrKey,
  TransactionBuilder,
  nativeToScVal,
  xdr,
} from '@stellar/stellar-sdk';

/**
 * Builders of real Stellar XDR for tests: a signed InvokeHostFunction envelope, its
 * TransactionResult and a TransactionMeta carrying contract events, and the raw `getTransaction`
 * result Soroban RPC returns for them.
 */

export const TEST_PASSPHRASE = 'Test SDF Network ; September 2015';

/** A contract event in the bridge layout (chains/stellar/events.ts). */
export function bridgeEvent(
  contractId: string,
  name: string,
  reqHash: string,
  key: string,
  data: Record<string, { value: unknown; type: string }>,
): xdr.ContractEvent {
  const bytes = (hex: string) => xdr.ScVal.scvBytes(Buffer.from(hex.replace(/^0x/, ''), 'hex'));
  return new xdr.ContractEvent({
    ext: new xdr.ExtensionPoint(0),
    contractId: StrKey.decodeContract(contractId) as unknown as xdr.Hash,
    type: xdr.ContractEventType.contract(),
    body: new xdr.ContractEventBody(
      0,
      new xdr.ContractEventV0({
        topics: [xdr.ScVal.scvSymbol(name), bytes(reqHash), bytes(key)],
        data: xdr.ScVal.scvMap(
          Object.entries(data).map(
            ([field, { value, type }]) =>
              new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(field), val: nativeToScVal(value, { type }) }),
          ),
        ),
      }),
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

