import { Interface } from 'ethers';
import type { Web3 } from 'web3';
import { rpcCall } from './rpc.ts';

/**
 * Reads of an order chain's state that a reservation depends on: can this Bridger pay the deposit
 * (balance, and for an ERC-20 the OrderPortal's allowance), and did an order's deposit happen
 * (`OrderPortal.orders(orderHash)`). Each read throws `RpcUnavailableError` when the RPC fails.
 */

const READS = new Interface([
  'function balanceOf(address owner) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function orders(bytes32 orderHash) view returns (uint8)',
]);

/** The zero address: how the registry spells a chain's native coin. */
const NATIVE = '0x0000000000000000000000000000000000000000';

async function view(web3: Web3, to: string, name: 'balanceOf' | 'allowance' | 'orders', args: unknown[]): Promise<bigint> {
  const data = READS.encodeFunctionData(name, args);
  const result = await rpcCall(`eth_call ${name}`, () => web3.eth.call({ to, data }, 'latest'));
  return BigInt(READS.decodeFunctionResult(name, String(result))[0]);
}

/** What a Bridger holds of the order chain's token, and (ERC-20 only; null for the native coin) what the portal may pull. */
export interface DepositFunding {
  balance: bigint;
  allowance: bigint | null;
}

/** `owner`'s balance of `token` (the zero address: the native coin) and, for an ERC-20, its allowance to `spender`. */
export async function readEvmDepositFunding(web3: Web3, token: string, owner: string, spender: string): Promise<DepositFunding> {
  if (token.toLowerCase() === NATIVE) {
    const balance = await rpcCall('eth_getBalance', () => web3.eth.getBalance(owner, 'latest'));
    return { balance: BigInt(balance), allowance: null };
  }
  const [balance, allowance] = await Promise.all([view(web3, token, 'balanceOf', [owner]), view(web3, token, 'allowance', [owner, spender])]);
  return { balance, allowance };
}

/** The OrderPortal's states of an order (OrderPortal.sol `OrderState`). */
export const PORTAL_ORDER_STATES = ['None', 'Deposited', 'Unlocked', 'Refunded'] as const;
export type PortalOrderState = (typeof PORTAL_ORDER_STATES)[number];

/** The state the OrderPortal at `portal` holds for `orderHash`, at the latest block (unconfirmed blocks included: a deposit is seen as early as possible). */
export async function readEvmPortalOrderState(web3: Web3, portal: string, orderHash: string): Promise<PortalOrderState> {
  const state = Number(await view(web3, portal, 'orders', [orderHash]));
  const name = PORTAL_ORDER_STATES[state];
  if (!name) throw new RangeError(`OrderPortal ${portal} reports an unknown state ${state} for order ${orderHash}`);
  return name;
}
