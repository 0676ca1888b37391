import { Account, Address, Keypair, nativeToScVal, Operation, rpc, scValToNative, TransactionBuilder, xdr } from '@stellar/stellar-sdk';
import { uuidToBytes32 } from '../address.ts';
import { RpcUnavailableError } from '../errors.ts';
import { PORTAL_ORDER_STATES, type DepositFunding, type PortalOrderState } from '../evm/order-chain-reads.ts';

/**
 * Read-only calls of Soroban contracts through `simulateTransaction` (no fee, no signature, never
 * submitted): the views of the AdManager and OrderPortal (contracts/soroban) and a SEP-41 token's
 * balance, which the books audit, the reservation re-read and the tree sync ask the chain.
 */

/** Any account will do as the source of a read-only simulation: it is never submitted or signed. */
const VIEW_SOURCE = Keypair.fromRawEd25519Seed(Buffer.alloc(32, 1)).publicKey();

/**
 * One simulated call of `fn(args)` on `contract`, its return value as `scValToNative` gives it.
 * Throws `RpcUnavailableError` when the RPC fails or the simulation does not succeed (the chain
 * cannot tell now: callers do nothing irreversible on it).
 */
export async function stellarView(server: rpc.Server, contract: string, fn: string, args: xdr.ScVal[] = []): Promise<{ value: unknown; ledger: number }> {
  try {
    const { passphrase } = await server.getNetwork();
    const tx = new TransactionBuilder(new Account(VIEW_SOURCE, '0'), { fee: '100', networkPassphrase: passphrase })
      .addOperation(Operation.invokeContractFunction({ contract, function: fn, args }))
      .setTimeout(0).build();
    const sim = await server.simulateTransaction(tx);
    if (!rpc.Api.isSimulationSuccess(sim) || !sim.result) {
      throw new Error(`${fn} of ${contract} failed: ${'error' in sim ? String(sim.error) : 'no result'}`);
    }
    return { value: scValToNative(sim.result.retval), ledger: sim.latestLedger };
  } catch (error) {
    if (error instanceof RpcUnavailableError) throw error;
    throw new RpcUnavailableError(`Soroban RPC could not read ${fn} of ${contract}: ${(error as Error).message}`, { cause: error });
  }
}

const bytes32 = (hex: string): xdr.ScVal => nativeToScVal(Buffer.from(hex.replace(/^0x/, ''), 'hex'), { type: 'bytes' });

/** An ad as the Soroban AdManager stores it (its `ad` view); `exists` is false for an id never created. Same shape as EVM's. */
export async function stellarAdState(server: rpc.Server, adManager: string, adId: string): Promise<{
  exists: boolean;
  available: bigint;
  locked: bigint;
  closed: boolean;
}> {
  const { value } = await stellarView(server, adManager, 'ad', [bytes32(uuidToBytes32(adId))]);
  if (value === null || value === undefined) return { exists: false, available: 0n, locked: 0n, closed: false };
  const ad = value as { available: bigint; locked: bigint; closed: boolean };
  return { exists: true, available: BigInt(ad.available), locked: BigInt(ad.locked), closed: Boolean(ad.closed) };
}

/**
 * An order's state number on a Soroban AdManager or OrderPortal (their `order_state` view), numbered
 * as on EVM: AdManager 0 None, 1 Locked, 2 Unlocked, 3 Released; OrderPortal 0 None, 1 Deposited,
 * 2 Unlocked, 3 Refunded (the contracts' `OrderState` enums).
 */
export async function stellarOrderState(server: rpc.Server, contract: string, orderHash: string): Promise<number> {
  const { value } = await stellarView(server, contract, 'order_state', [bytes32(orderHash)]);
  const state = Number(value);
  if (!Number.isInteger(state) || state < 0 || state > 3) throw new RangeError(`${contract} reports an unknown state ${String(value)} for order ${orderHash}`);
  return state;
}

/** The latest ledger's close time (unix seconds): the time the Soroban contracts see now. Throws `RpcUnavailableError`. */
export async function stellarLatestTime(server: rpc.Server): Promise<bigint> {
  let closeTime: string | undefined;
  try {
    closeTime = (await server.getLatestLedger()).closeTime;
  } catch (error) {
    throw new RpcUnavailableError(`Soroban RPC failed on getLatestLedger: ${(error as Error).message}`, { cause: error });
  }
  // An RPC too old to give the close time cannot tell the chain's time: not a guess to act on.
  if (!closeTime || !/^\d+$/.test(closeTime)) throw new RpcUnavailableError('Soroban RPC getLatestLedger gave no closeTime');
  return BigInt(closeTime);
}

/** The OrderPortal's state of `orderHash` by name, as `readEvmPortalOrderState` answers on EVM. */
export async function readStellarPortalOrderState(server: rpc.Server, portal: string, orderHash: string): Promise<PortalOrderState> {
  return PORTAL_ORDER_STATES[await stellarOrderState(server, portal, orderHash)]!;
}

/**
 * What `owner` holds of the SEP-41 token `token` (the Stellar Asset Contract for XLM included), by
 * its `balance` view. The allowance is null: the Soroban OrderPortal's `create_order` takes the
 * deposit with `transfer` under the Bridger's own authorisation of that call
 * (contracts/soroban/shared/src/tokens.rs `pull`), never with `transfer_from`, so there is no
 * allowance a deposit depends on.
 */
export async function readStellarDepositFunding(server: rpc.Server, token: string, owner: string): Promise<DepositFunding> {
  const { value } = await stellarView(server, token, 'balance', [new Address(owner).toScVal()]);
  return { balance: BigInt(value as bigint), allowance: null };
}
