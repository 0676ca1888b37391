import { randomBytes } from 'node:crypto';
import { isStellarContract } from './address.ts';
import { RequestFieldError, type FieldSpec } from './request-schema.ts';
import { assertI128Amount } from './stellar/amounts.ts';
import type { OrderParams } from '../domain/order-params.ts';
import { typedDataDigest, typedDataValues, type DomainNameVersion } from './evm/typed-data.ts';

export type { OrderParams } from '../domain/order-params.ts';

/** The Order struct, in hashing order; every address is a 32-byte value so either chain kind fits. */
export const ORDER_FIELDS: FieldSpec[] = [
  { name: 'orderChainToken', kind: 'address' },
  { name: 'adChainToken', kind: 'address' },
  { name: 'orderAmount', kind: 'uint' },
  { name: 'adAmount', kind: 'uint' },
  { name: 'bridger', kind: 'address' },
  { name: 'orderRecipient', kind: 'address' },
  { name: 'adId', kind: 'uuid' },
  { name: 'adCreator', kind: 'address' },
  { name: 'adRecipient', kind: 'address' },
  { name: 'salt', kind: 'uint' },
  { name: 'orderChainId', kind: 'uint' },
  { name: 'orderPortal', kind: 'address' },
  { name: 'adChainId', kind: 'uint' },
  { name: 'adManager', kind: 'address' },
  { name: 'lockExpiry', kind: 'uint' },
  { name: 'refundTime', kind: 'uint' },
];

/**
 * The order hash: the EIP-712 digest of `Order` under the domain `{name, version}` only. It has no
 * chainId or verifyingContract because the struct itself names both chains and both contracts, so
 * the same 32 bytes identify the order on the order chain, on the ad chain and in the circuit.
 * Stellar contracts compute the same keccak256-based digest. Throws `RequestFieldError` on a bad field.
 */
export function computeOrderHash(params: OrderParams, domain: DomainNameVersion): string {
  // `amount` is the spec's name for the deposit: an order whose two spellings differ is no order.
  if (params.amount !== params.orderAmount) {
    throw new RequestFieldError(`amount: must equal orderAmount (the deposit on the order chain), received '${params.amount}' and '${params.orderAmount}'`);
  }
  // A Soroban contract's Order struct holds both amounts as i128 (its own side's and the other
  // chain's, both hashed), so an order touching Stellar needs both to fit, not only its own side's.
  if (isStellarContract(params.orderPortal) || isStellarContract(params.adManager)) {
    assertI128Amount('orderAmount', params.orderAmount);
    assertI128Amount('adAmount', params.adAmount);
  }
  return typedDataDigest({ name: domain.name, version: domain.version }, 'Order', ORDER_FIELDS, structOf(params));
}

/** The Order struct's fields: `amount` is the spec's name for `orderAmount`, not a field of its own. */
function structOf(params: OrderParams): Record<string, unknown> {
  const { amount: _deposit, ...struct } = params;
  return struct;
}

/** A fresh random 256-bit salt as a decimal string: makes each order's hash unique. */
export function randomSalt(): string {
  return BigInt(`0x${randomBytes(32).toString('hex')}`).toString();
}

/**
 * The order as the contracts take it (the `Order` struct argument): every field a 32-byte word,
 * `bytes32` fields as 0x hex and `uint256` fields as bigint. Clients that rebuild a call from
 * `orderParams` apply the same encoding (chains/README.md).
 */
export function encodeOrderParams(params: OrderParams): Record<Exclude<keyof OrderParams, 'amount'>, string | bigint> {
  return typedDataValues(ORDER_FIELDS, structOf(params)) as Record<Exclude<keyof OrderParams, 'amount'>, string | bigint>;
}
