import { randomBytes } from 'node:crypto';

export type { OrderParams } from '../domain/order-params.ts';
export { encodeOrderParams, ORDER_FIELDS } from './order-struct.ts';
// In a file of its own with no Node built-in: the client package bundles it (client/order.js).
export { computeOrderHash } from './order-hash.ts';

/** A fresh random 256-bit salt as a decimal string: makes each order's hash unique. */
export function randomSalt(): string {
  return BigInt(`0x${randomBytes(32).toString('hex')}`).toString();
}
