import { Interface } from 'ethers';
import { addressToBytes32, uuidToBytes32 } from '../address.ts';
import { NATIVE_TOKEN_ADDRESS } from '../../domain/chain-kind.ts';
import type { OrderParams } from '../../domain/order-params.ts';
import { encodeOrderParams } from '../order-struct.ts';
import { AD_MANAGER_FUNCTIONS, ORDER_PORTAL_FUNCTIONS } from './abi.ts';
import type { ActionName } from '../request-schema.ts';
import type { SignedCallData } from '../signed-call-shape.ts';

/** A ready contract call: function, positional arguments and the native value to attach. */
export interface EvmContractCall {
  functionName: string;
  args: unknown[];
  /** Wei to send: the amount when the token is native (zero address), else 0. */
  value: bigint;
}

/** Everything a signed response carries; field values as strings. */
type Signed = SignedCallData & Record<string, string | number | undefined>;

export interface CallExtras {
  /** createOrder, lockForOrder, unlock: the order the request's orderHash was computed from. */
  orderParams?: OrderParams;
  /** unlock: `abi.encode(uint[2] pA, uint[2][2] pB, uint[2] pC)` as 0x hex (prover/solidity.ts encodeProof). */
  proof?: string;
  /** fundAd: the ad's token, to know whether the amount travels as native value. */
  adToken?: string;
}

/** Raised when a call cannot be assembled (a missing extra). */
export class CallArgsError extends Error {}

/**
 * The AdManager/OrderPortal call for a signed request, as the reference contracts in
 * contracts/evm/src take it: the action's arguments, then `authToken, deadline, signature`.
 * This is what a client does with the API's response; tests and tools use it to stay in step.
 */
export function evmContractCall(action: ActionName, signed: Signed, extras: CallExtras = {}): EvmContractCall {
  const tail = [signed.authToken, BigInt(signed.deadline), signed.signature];
  const field = (name: string): string => {
    const value = signed[name];
    if (value === undefined) throw new CallArgsError(`${action} call data lacks ${name}`);
    return String(value);
  };
  const order = () => {
    if (!extras.orderParams) throw new CallArgsError(`${action} needs orderParams`);
    return encodeOrderParams(extras.orderParams);
  };
  const nativeValue = (token: string | undefined, amount: string) => (token === NATIVE_TOKEN_ADDRESS ? BigInt(amount) : 0n);
  switch (action) {
    case 'createAd':
      return {
        functionName: 'createAd',
        args: [
          uuidToBytes32(field('adId')),
          field('adToken'),
          BigInt(field('initialAmount')),
          BigInt(field('orderChainId')),
          addressToBytes32(field('adRecipient')),
          ...tail,
        ],
        value: nativeValue(field('adToken'), field('initialAmount')),
      };
    case 'fundAd':
      return {
        functionName: 'fundAd',
        args: [uuidToBytes32(field('adId')), BigInt(field('amount')), ...tail],
        value: nativeValue(extras.adToken, field('amount')),
      };
    case 'withdrawFromAd':
      return {
        functionName: 'withdrawFromAd',
        args: [uuidToBytes32(field('adId')), BigInt(field('amount')), field('to'), ...tail],
        value: 0n,
      };
    case 'closeAd':
      return { functionName: 'closeAd', args: [uuidToBytes32(field('adId')), field('to'), ...tail], value: 0n };
    case 'createOrder':
      return {
        functionName: 'createOrder',
        args: [order(), BigInt(field('secretCommitment')), ...tail],
        value: nativeValue(extras.orderParams?.orderChainToken, extras.orderParams?.orderAmount ?? '0'),
      };
    case 'lockForOrder':
      return { functionName: 'lockForOrder', args: [order(), ...tail], value: 0n };
    case 'unlock':
      if (!extras.proof) throw new CallArgsError('unlock needs the proof');
      return {
        functionName: 'unlock',
        args: [order(), BigInt(field('nullifierHash')), BigInt(field('targetRoot')), extras.proof, ...tail],
        value: 0n,
      };
  }
}

/** A transaction a wallet can send as it is (`wallet.sendTransaction(tx)`): contract, call data, native value. */
export interface EvmTransactionRequest {
  /** The contract the signed response names (`contractAddress`): its AdManager or OrderPortal. */
  to: string;
  /** The ABI-encoded call (`evmContractCall` through AD_MANAGER_FUNCTIONS / ORDER_PORTAL_FUNCTIONS). */
  data: string;
  value: bigint;
}

/** Both contracts' calls in one interface: `unlock` has the same signature on both. */
const CALLS = new Interface([...AD_MANAGER_FUNCTIONS, ...ORDER_PORTAL_FUNCTIONS.filter((entry) => !entry.startsWith('function unlock('))]);

/**
 * The transaction that submits a signed response: `evmContractCall` encoded for the contract the
 * response names. Same arguments, same errors (`CallArgsError` on a missing extra).
 */
export function evmTransaction(action: ActionName, signed: Signed, extras: CallExtras = {}): EvmTransactionRequest {
  const call = evmContractCall(action, signed, extras);
  return { to: String(signed.contractAddress), data: CALLS.encodeFunctionData(call.functionName, call.args), value: call.value };
}

/** The two ways out that need no relayer request (devnet/README.md "Timeouts"). */
export type TimeoutAction = 'refund' | 'releaseLock';

/**
 * The call that takes an order's funds back after its timeout: `refund` on the OrderPortal (from
 * refundTime on, pays the Bridger) or `releaseLock` on the AdManager (from lockExpiry on, back to
 * the Maker's ad). Anyone may submit it; the contract decides whom it pays.
 */
export function evmTimeoutCall(action: TimeoutAction, orderParams: OrderParams): EvmContractCall {
  return { functionName: action, args: [encodeOrderParams(orderParams)], value: 0n };
}

/**
 * The transaction for a timeout (`evmTimeoutCall` encoded): `refund` to the order's OrderPortal,
 * `releaseLock` to its AdManager, both named by the order itself.
 */
export function evmTimeoutTransaction(action: TimeoutAction, orderParams: OrderParams): EvmTransactionRequest {
  const call = evmTimeoutCall(action, orderParams);
  const to = action === 'refund' ? orderParams.orderPortal : orderParams.adManager;
  return { to, data: CALLS.encodeFunctionData(call.functionName, call.args), value: call.value };
}
