import { Address, nativeToScVal, Operation, StrKey, xdr } from '@stellar/stellar-sdk';
import { addressToBytes32, uuidToBytes32 } from '../address.ts';
import { CallArgsError, type TimeoutAction } from '../evm/call-args.ts';
import type { OrderParams } from '../../domain/order-params.ts';
// Not ../order.ts (node:crypto): the client package bundles this file for browsers (client/stellar.js).
import { encodeOrderParams, ORDER_FIELDS } from '../order-struct.ts';
import type { ActionName } from '../request-schema.ts';
import type { SignedCallData } from '../signed-call-shape.ts';

/** Everything a signed response carries; field values as strings. */
type Signed = SignedCallData & Record<string, string | number | undefined>;

export interface StellarCallExtras {
  /** createOrder, lockForOrder, unlock: the order the request's orderHash was computed from. */
  orderParams?: OrderParams;
  /** unlock: the proof's 256 bytes `pA ‖ pB ‖ pC` as 0x hex (the response's `proof`, as on EVM). */
  proof?: string;
}

/** Hex (with or without 0x) as bytes, without Node's Buffer (browsers have none). */
function hexBytes(hex: string): Uint8Array {
  const digits = hex.replace(/^0x/, '');
  if (digits.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(digits)) throw new CallArgsError(`not hex bytes: '${hex.slice(0, 80)}'`);
  const out = new Uint8Array(digits.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(digits.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const bytes = (hex: string): xdr.ScVal => nativeToScVal(hexBytes(hex), { type: 'bytes' });
const i128 = (value: string | bigint): xdr.ScVal => nativeToScVal(BigInt(value), { type: 'i128' });
const u256 = (value: string | bigint): xdr.ScVal => nativeToScVal(BigInt(value), { type: 'u256' });
const u64 = (value: string | bigint): xdr.ScVal => nativeToScVal(BigInt(value), { type: 'u64' });
const address = (strkey: string): xdr.ScVal => new Address(strkey).toScVal();
const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The Soroban `Order` struct (contracts/soroban/shared/src/order.rs) as the contracts take it: a
 * map from the snake_case field names, sorted as the host requires, to 32-byte words (`BytesN<32>`)
 * for addresses and the ad id, `i128` for amounts, `u64` for the two times and `U256` for the
 * other integers. The words are `encodeOrderParams`' (chains/README.md "Values as 32-byte words").
 */
export function orderScVal(params: OrderParams): xdr.ScVal {
  const words = encodeOrderParams(params);
  const entries = ORDER_FIELDS.map(({ name, kind }) => {
    const value = words[name as keyof typeof words];
    let val: xdr.ScVal;
    if (kind !== 'uint') val = bytes(String(value));
    else if (/amount$/i.test(name)) val = i128(value);
    else if (name === 'lockExpiry' || name === 'refundTime') val = u64(value);
    else val = u256(value);
    return { key: snake(name), val };
  }).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return xdr.ScVal.scvMap(entries.map(({ key, val }) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(key), val })));
}

/**
 * The AdManager/OrderPortal invocation for a signed request, as the Soroban contracts in
 * contracts/soroban take it: the action's arguments, then `auth_token, deadline, signer, signature`
 * (`signer`: the 32-byte key of the response's `signerPublicKey`, which the contract checks is its
 * current relayer key or, during a rotation's grace period, the previous one). What a
 * Stellar dApp does with the API's response (the EVM twin is `evmContractCall`); the caller
 * simulates, signs and submits it (`createOrder` needs the Bridger's authorisation: submit it
 * from the Bridger's account). Throws `CallArgsError` when a field or extra is missing.
 */
export function stellarContractCall(action: ActionName, signed: Signed, extras: StellarCallExtras = {}): xdr.Operation {
  const field = (name: string): string => {
    const value = signed[name];
    if (value === undefined) throw new CallArgsError(`${action} call data lacks ${name}`);
    return String(value);
  };
  const order = (): OrderParams => {
    if (!extras.orderParams) throw new CallArgsError(`${action} needs orderParams`);
    return extras.orderParams;
  };
  const adId = () => bytes(uuidToBytes32(field('adId')));
  const signer = () => nativeToScVal(StrKey.decodeEd25519PublicKey(field('signerPublicKey')), { type: 'bytes' });
  const tail = () => [bytes(field('authToken')), u64(field('deadline')), signer(), bytes(field('signature'))];
  const invoke = (fn: string, args: xdr.ScVal[]) =>
    Operation.invokeContractFunction({ contract: field('contractAddress'), function: fn, args: [...args, ...tail()] });
  switch (action) {
    case 'createAd':
      return invoke('create_ad', [
        address(field('adCreator')), adId(), address(field('adToken')), i128(field('initialAmount')),
        u256(field('orderChainId')), bytes(addressToBytes32(field('adRecipient'))),
      ]);
    case 'fundAd':
      return invoke('fund_ad', [adId(), i128(field('amount'))]);
    case 'withdrawFromAd':
      return invoke('withdraw_from_ad', [adId(), i128(field('amount')), address(field('to'))]);
    case 'closeAd':
      return invoke('close_ad', [adId(), address(field('to'))]);
    case 'createOrder':
      return invoke('create_order', [address(order().bridger), orderScVal(order()), u256(field('secretCommitment'))]);
    case 'lockForOrder':
      return invoke('lock_for_order', [orderScVal(order())]);
    case 'unlock':
      if (!extras.proof) throw new CallArgsError('unlock needs the proof');
      return invoke('unlock', [orderScVal(order()), u256(field('nullifierHash')), u256(field('targetRoot')), bytes(extras.proof)]);
  }
}

/**
 * The call that takes an order's funds back after its timeout on Soroban: `refund` on the
 * OrderPortal (from refundTime on, pays the Bridger) or `release_lock` on the AdManager (from
 * lockExpiry on, back to the Maker's ad). Anyone may submit it; the contract decides whom it pays.
 */
export function stellarTimeoutCall(action: TimeoutAction, orderParams: OrderParams): xdr.Operation {
  const [contract, fn] = action === 'refund' ? [orderParams.orderPortal, 'refund'] : [orderParams.adManager, 'release_lock'];
  return Operation.invokeContractFunction({ contract, function: fn, args: [orderScVal(orderParams)] });
}
