import type { OrderParams } from '../domain/order-params.ts';
import type { FieldSpec } from './request-schema.ts';
import { typedDataValues } from './evm/typed-data.ts';

// The Order struct's shape and its contract encoding, with no Node built-in: chains/order.ts
// (hashing, salts) builds on it, and the client package bundles it for browsers (client/evm.js).

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

/** The Order struct's fields: `amount` is the spec's name for `orderAmount`, not a field of its own. */
export function structOf(params: OrderParams): Record<string, unknown> {
  const { amount: _deposit, ...struct } = params;
  return struct;
}

/**
 * The order as the contracts take it (the `Order` struct argument): every field a 32-byte word,
 * `bytes32` fields as 0x hex and `uint256` fields as bigint. Clients that rebuild a call from
 * `orderParams` apply the same encoding (chains/README.md).
 */
export function encodeOrderParams(params: OrderParams): Record<Exclude<keyof OrderParams, 'amount'>, string | bigint> {
  return typedDataValues(ORDER_FIELDS, structOf(params)) as Record<Exclude<keyof OrderParams, 'amount'>, string | bigint>;
}
