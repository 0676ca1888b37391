import { isStellarContract } from './address.ts';
import { RequestFieldError } from './request-schema.ts';
import { assertI128Amount } from './stellar/amounts.ts';
import type { OrderParams } from '../domain/order-params.ts';
import { typedDataDigest, type DomainNameVersion } from './evm/typed-data.ts';
import { ORDER_FIELDS, structOf } from './order-struct.ts';

// No Node built-in here: the client package bundles this file for browsers (client/order.js,
// `orderHashOf`), so dApps hash an order with the service's own code.

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
