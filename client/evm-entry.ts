/**
 * The source of the package's `@cross-chain-relayer/client/evm` (client/evm.js, client/evm.d.ts):
 * what a dApp needs to submit the API's signed responses to the EVM contracts with its own ethers
 * wallet. `npm run client:generate` bundles it with esbuild (ethers left external) and emits its
 * declarations with TypeScript 5; it is not shipped itself.
 *
 * The work is the service's own: chains/evm/call-args.ts (arguments, order encoding, native value)
 * and chains/evm/abi.ts (function fragments). The types below are spelled out so the declarations
 * stand alone; this file's calls into the service check one direction, client/client.test.ts the other.
 */
import { Interface } from 'ethers';
import { evmTimeoutTransaction as timeoutTransaction, evmTransaction as signedTransaction } from '../chains/evm/call-args.ts';
import { AD_MANAGER_ABI, AD_MANAGER_FUNCTIONS, ORDER_PORTAL_ABI, ORDER_PORTAL_FUNCTIONS } from '../chains/evm/abi.ts';

/** The signed actions, as the API's responses are for them. */
export type EvmAction = 'createAd' | 'fundAd' | 'withdrawFromAd' | 'closeAd' | 'createOrder' | 'lockForOrder' | 'unlock';

/** The calls anyone may make after an order's time is up, with no relayer request. */
export type EvmTimeoutAction = 'refund' | 'releaseLock';

/** An order as the API returns it (`orderParams`): addresses in their chain's spelling, integers as decimal strings. */
export interface OrderParams {
  orderChainToken: string;
  adChainToken: string;
  amount: string;
  orderAmount: string;
  adAmount: string;
  bridger: string;
  orderRecipient: string;
  adId: string;
  adCreator: string;
  adRecipient: string;
  salt: string;
  orderChainId: string;
  orderPortal: string;
  adChainId: string;
  adManager: string;
  lockExpiry: string;
  refundTime: string;
}

/**
 * A signed response of the API (create ad, fund, withdraw, close, a trade's `reqContractDetails`,
 * lock, unlock): the shared signed call data and the action's own fields.
 */
export interface SignedResponse {
  contractAddress: string;
  authToken: string;
  deadline: string;
  signature: string;
  orderParams?: OrderParams;
  proof?: string;
  [field: string]: unknown;
}

/** What a response does not carry itself. */
export interface CallExtras {
  /** createOrder, lockForOrder, unlock: the order; by default the response's own `orderParams`. */
  orderParams?: OrderParams;
  /** unlock: the proof as 0x hex; by default the response's own `proof`. */
  proof?: string;
  /** fundAd: the ad's token address (`GET /v1/ads/{id}`), so a native-token ad's amount travels as value. */
  adToken?: string;
}

/** A transaction a wallet sends as it is: `await wallet.sendTransaction(tx)`. */
export interface EvmTransactionRequest {
  /** The contract the response names (`contractAddress`). */
  to: string;
  /** The ABI-encoded call. */
  data: string;
  /** Wei to attach: the amount when the token is native (the zero address), else 0. */
  value: bigint;
}

/**
 * The transaction that submits `signed` (the API's response for `action`) to its AdManager or
 * OrderPortal. Throws when the call cannot be assembled: a field or an extra missing.
 */
export function evmTransaction(action: EvmAction, signed: SignedResponse, extras: CallExtras = {}): EvmTransactionRequest {
  const withOwn: CallExtras = { orderParams: signed.orderParams, proof: signed.proof, ...extras };
  return signedTransaction(action, signed as Parameters<typeof signedTransaction>[1], withOwn);
}

/**
 * The timeout transaction for an order on an EVM chain: `refund` (OrderPortal, from refundTime on,
 * pays the Bridger) or `releaseLock` (AdManager, from lockExpiry on, back to the Maker's ad).
 */
export function evmTimeoutTransaction(action: EvmTimeoutAction, orderParams: OrderParams): EvmTransactionRequest {
  return timeoutTransaction(action, orderParams);
}

const ERC20_APPROVE = new Interface(['function approve(address spender, uint256 amount) returns (bool)']);

/**
 * The ERC-20 `approve(spender, amount)` a wallet sends before `createAd`/`fundAd` (spender: the
 * response's `contractAddress`, the AdManager) or `createOrder` (the OrderPortal) pulls the tokens.
 * Not for a native-token ad or order (the zero address): its amount travels as value. Throws on an
 * address or amount the ABI cannot encode.
 */
export function erc20ApproveTransaction(token: string, spender: string, amount: bigint): EvmTransactionRequest {
  return { to: token, data: ERC20_APPROVE.encodeFunctionData('approve', [spender, amount]), value: 0n };
}

/** AdManager's ABI as human-readable fragments (ethers `Interface`/`Contract`): the calls, then the events and views the service reads. */
export const adManagerAbi: readonly string[] = [...AD_MANAGER_FUNCTIONS, ...AD_MANAGER_ABI];

/** OrderPortal's ABI as human-readable fragments: the calls, then the events and views the service reads. */
export const orderPortalAbi: readonly string[] = [...ORDER_PORTAL_FUNCTIONS, ...ORDER_PORTAL_ABI];
