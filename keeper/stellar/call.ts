import { Address, StrKey, xdr } from '@stellar/stellar-sdk';

/**
 * What the keeper's outbox holds for one Stellar send (a `keeper_sends` row): `to_address` is the
 * contract id (C...) and `call_data` the base64 XDR of one `xdr.Operation`, an `invokeHostFunction`
 * operation invoking that contract (as `stellarContractCall` / `stellarTimeoutCall` in
 * chains/stellar/call-args.ts build them, without a source account: the keeper's account is the
 * transaction's source); `value` is 0 (a Soroban call carries no native value).
 */
export interface StellarKeeperCall {
  to: string;
  data: string;
}

/** A Stellar send's call data that the sender cannot send. */
export class StellarCallDataError extends Error {
  readonly code = 'KEEPER_STELLAR_CALL_DATA';
}

/**
 * The `to` and `data` of a Stellar keeper send (for `enqueueKeeperSend`) from the operation to send:
 * throws `StellarCallDataError` unless `operation` invokes contract `contractId` (see
 * `stellarCallOf`). The operation's own source account, if any, is dropped: the keeper sends it.
 */
export function stellarKeeperCall(operation: xdr.Operation, contractId: string): StellarKeeperCall {
  const checked = stellarCallOf({ to: contractId, data: operation.toXDR('base64') });
  return { to: contractId, data: checked.toXDR('base64') };
}

/**
 * The operation a Stellar send's row carries, checked: `data` decodes to one `invokeHostFunction`
 * operation with no source account of its own, calling a function of contract `to` (C...). Throws
 * `StellarCallDataError` naming what is wrong.
 */
export function stellarCallOf(row: { to: string; data: string }): xdr.Operation {
  if (!StrKey.isValidContract(row.to)) throw new StellarCallDataError(`to_address must be a contract id (C...), received '${row.to.slice(0, 80)}'`);
  let operation: xdr.Operation;
  try {
    operation = xdr.Operation.fromXDR(row.data, 'base64');
  } catch (error) {
    throw new StellarCallDataError(`call_data must be the base64 XDR of one xdr.Operation: ${(error as Error).message}`);
  }
  if (operation.body().switch() !== xdr.OperationType.invokeHostFunction()) {
    throw new StellarCallDataError(`call_data must be an invokeHostFunction operation, received ${operation.body().switch().name}`);
  }
  const fn = operation.body().invokeHostFunctionOp().hostFunction();
  if (fn.switch() !== xdr.HostFunctionType.hostFunctionTypeInvokeContract()) {
    throw new StellarCallDataError(`call_data must invoke a contract function, received ${fn.switch().name}`);
  }
  const target = Address.fromScAddress(fn.invokeContract().contractAddress()).toString();
  if (target !== row.to) throw new StellarCallDataError(`call_data invokes ${target}, not to_address ${row.to}`);
  if (operation.sourceAccount()) return new xdr.Operation({ sourceAccount: null, body: operation.body() });
  return operation;
}
