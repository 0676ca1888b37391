import type { TradeStep } from '../../domain/trade-steps.ts';
import type { TradeEvent, UnlockSide } from './machine.ts';

/**
 * The chain facts of a trade, in ONE table: for each on-chain step, the contract function, the
 * contract and chain side it runs on, the event that proves it, the order's state on that contract
 * once it ran (named, as the contracts' `orders` views number them 0-3), the endpoint that reports
 * it and the machine event it stands for. Verification (trades/applier/verify-confirmation.ts), `awaitedAction`, the
 * lock window (lock-window.ts), the reservation-expiry veto (expiry-veto.ts) and the audit
 * (audit/audit.ts through `unreportedOnChain`) all read it; nothing else spells these facts out.
 */

/** The two contracts of a trade: the order chain's OrderPortal (deposit, order-side unlock) and the ad chain's AdManager (lock, ad-side unlock, release). */
export type TradeContract = 'OrderPortal' | 'AdManager';

/** An order's state on the OrderPortal, in the order of its view's numbers (0 None ... 3 Refunded). */
export const PORTAL_ORDER_STATES = ['None', 'Deposited', 'Unlocked', 'Refunded'] as const;
/** An order's state on the AdManager, in the order of its view's numbers (0 None ... 3 Released). */
export const MANAGER_ORDER_STATES = ['None', 'Locked', 'Unlocked', 'Released'] as const;
export type PortalOrderState = (typeof PORTAL_ORDER_STATES)[number];
export type ManagerOrderState = (typeof MANAGER_ORDER_STATES)[number];

/** The order's state each contract reports. */
export interface OrderStates {
  OrderPortal: PortalOrderState;
  AdManager: ManagerOrderState;
}

/**
 * The name of the state number `contract`'s view reports (EVM `orders(orderHash)`, Soroban
 * `order_state`, numbered alike); throws `RangeError` on a number no contract state has.
 */
export function orderStateName<C extends TradeContract>(contract: C, value: number): OrderStates[C] {
  const names: readonly string[] = contract === 'OrderPortal' ? PORTAL_ORDER_STATES : MANAGER_ORDER_STATES;
  const name = names[value];
  if (name === undefined) throw new RangeError(`${contract} reports an unknown order state ${value}`);
  return name as OrderStates[C];
}

/**
 * The endpoint a transaction was reported through: `/confirm` (the deposit, later the lock, or the
 * lock's release) or `/unlock/confirm` (either unlock).
 */
export type ConfirmationKind = 'deposit-or-lock' | 'unlock';

/** One row of the table. */
export interface ChainFact {
  /** The step as the Trade object lists it (domain/trade-steps.ts). */
  step: TradeStep;
  /** The contract function (the signed request's or timeout's action name in chains/). */
  name: 'createOrder' | 'lockForOrder' | 'unlock' | 'releaseLock';
  /** The chain it runs on: `order` = the order chain, `ad` = the ad chain. */
  side: UnlockSide;
  contract: TradeContract;
  /** The event `contract` emits (chains/evm/abi.ts `BridgeEventName`). */
  event: 'OrderCreated' | 'OrderLocked' | 'OrderUnlocked' | 'LockReleased';
  /** The order's state on `contract` right after the step. */
  orderState: PortalOrderState | ManagerOrderState;
  /** The states on `contract` that show the step happened (it, or a later state only reached through it). */
  shownBy: readonly (PortalOrderState | ManagerOrderState)[];
  /** The endpoint that reports it (the audit reports one nobody did through the same). */
  confirmation: ConfirmationKind;
  /** The order's amount the event must move, checked on verification (null: the deposit, checked by its order hash and leaf). */
  amount: 'adAmount' | 'orderAmount' | null;
  /** The machine event it stands for once verified and final. */
  machineEvent: TradeEvent;
}

/** The table, in the order the steps happen (the audit delivers the first one the books lack). */
export const CHAIN_FACTS: readonly ChainFact[] = [
  {
    step: 'deposit', name: 'createOrder', side: 'order', contract: 'OrderPortal', event: 'OrderCreated',
    orderState: 'Deposited', shownBy: ['Deposited', 'Unlocked', 'Refunded'], confirmation: 'deposit-or-lock', amount: null,
    machineEvent: { type: 'DEPOSIT_CONFIRMED' },
  },
  {
    step: 'lock', name: 'lockForOrder', side: 'ad', contract: 'AdManager', event: 'OrderLocked',
    orderState: 'Locked', shownBy: ['Locked', 'Unlocked', 'Released'], confirmation: 'deposit-or-lock', amount: 'adAmount',
    machineEvent: { type: 'LOCK_CONFIRMED' },
  },
  {
    step: 'adUnlock', name: 'unlock', side: 'ad', contract: 'AdManager', event: 'OrderUnlocked',
    orderState: 'Unlocked', shownBy: ['Unlocked'], confirmation: 'unlock', amount: 'adAmount',
    machineEvent: { type: 'UNLOCK_CONFIRMED', side: 'ad' },
  },
  {
    step: 'orderUnlock', name: 'unlock', side: 'order', contract: 'OrderPortal', event: 'OrderUnlocked',
    orderState: 'Unlocked', shownBy: ['Unlocked'], confirmation: 'unlock', amount: 'orderAmount',
    machineEvent: { type: 'UNLOCK_CONFIRMED', side: 'order' },
  },
  {
    // AdManager.releaseLock (Soroban `release_lock`): the Maker's lock back after lockExpiry, no relayer request.
    step: 'lockRelease', name: 'releaseLock', side: 'ad', contract: 'AdManager', event: 'LockReleased',
    orderState: 'Released', shownBy: ['Released'], confirmation: 'deposit-or-lock', amount: 'adAmount',
    machineEvent: { type: 'LOCK_RELEASED' },
  },
];

/** The row of `step`. */
export function chainFact(step: TradeStep): ChainFact {
  return CHAIN_FACTS.find((fact) => fact.step === step)!;
}

/** An on-chain action of a trade and the side (chain) it happens on, as a confirmation names it. */
export type TradeAction = Pick<ChainFact, 'name' | 'side'>;

/** The row of an action (every action with its side names exactly one). */
export function chainFactOf(action: TradeAction): ChainFact {
  const found = CHAIN_FACTS.find((fact) => fact.name === action.name && fact.side === action.side);
  if (!found) throw new RangeError(`no trade step is ${action.name} on the ${action.side} side`);
  return found;
}

/** The action of a row, as `awaitedAction` answers it. */
export const actionOf = (fact: ChainFact): TradeAction => ({ name: fact.name, side: fact.side });

/** The action a recorded chain event (by its name, on the ad or the order chain) stands for, or undefined for an event no step emits there. */
export function recordedAction(event: string, side: UnlockSide): TradeAction | undefined {
  const found = CHAIN_FACTS.find((fact) => fact.event === event && fact.side === side);
  return found && actionOf(found);
}

/** The machine event a verified action stands for. */
export function eventOf(action: TradeAction): TradeEvent {
  return chainFactOf(action).machineEvent;
}

/**
 * Whether a transaction already recorded for this trade as `action` answers a report through
 * `kind`: the same endpoint again is a repeat (the machine then says `duplicate`); the deposit or
 * the lock sent to `/unlock/confirm`, or an unlock sent to `/confirm`, is a transaction of the
 * wrong kind and is refused.
 */
export function recordedActionFits(action: TradeAction['name'], kind: ConfirmationKind): boolean {
  return CHAIN_FACTS.some((fact) => fact.name === action && fact.confirmation === kind);
}
