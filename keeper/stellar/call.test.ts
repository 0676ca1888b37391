import { Asset, Keypair, Operation, StrKey, xdr } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { stellarCallOf, StellarCallDataError, stellarKeeperCall } from './call.ts';

const contract = StrKey.encodeContract(Buffer.alloc(32, 7));
const other = StrKey.encodeContract(Buffer.alloc(32, 8));
const invoke = (target = contract, source?: string) => Operation.invokeContractFunction({ contract: target, function: 'refund', args: [], source });

describe('a Stellar keeper send\'s row', () => {
  it('holds the contract id and the operation\'s base64 XDR, which reads back as the same call', () => {
    const row = stellarKeeperCall(invoke(), contract);
    expect(row.to).toBe(contract);
    expect(stellarCallOf(row).toXDR('base64')).toBe(invoke().toXDR('base64'));
  });

  it('drops an operation\'s own source account: the keeper\'s account is the transaction\'s source', () => {
    const row = stellarKeeperCall(invoke(contract, Keypair.random().publicKey()), contract);
    expect(xdr.Operation.fromXDR(row.data, 'base64').sourceAccount() ?? null).toBeNull();
  });

  it('refuses a call to another contract than to_address, a classic operation, and bytes that are no operation', () => {
    expect(() => stellarKeeperCall(invoke(other), contract)).toThrow(new StellarCallDataError(`call_data invokes ${other}, not to_address ${contract}`));
    const payment = Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: '1' });
    expect(() => stellarCallOf({ to: contract, data: payment.toXDR('base64') })).toThrow(/must be an invokeHostFunction operation, received payment/);
    expect(() => stellarCallOf({ to: contract, data: 'not xdr' })).toThrow(/must be the base64 XDR of one xdr.Operation/);
    expect(() => stellarCallOf({ to: Keypair.random().publicKey(), data: invoke().toXDR('base64') })).toThrow(/to_address must be a contract id/);
  });
});
