import { CHAIN_FACTS, type ChainFact, type OrderStates } from './chain-facts.ts';
import { transition, type TradeState } from './machine.ts';

/**
 * What the chains show of an open trade that its books cannot reach by a verified event (the
 * audit reports it as drift, never guesses): the deposit gone (`deposit-missing`), the lock gone
 * from a LOCKED trade (`lock-missing`), the deposit refunded to the Bridger (`deposit-refunded`).
 */
export type ChainDrift = 'deposit-missing' | 'lock-missing' | 'deposit-refunded';

/**
 * The audit's reading of an open trade against its two contracts (audit/audit.ts): the first
 * step of the chain-facts table the chain shows happened (its contract's state is one the step
 * leads to) and the machine would apply now (a step nobody reported: its transaction is then found
 * and delivered through the step's endpoint), else every drift the states show.
 */
export function unreportedOnChain(state: TradeState, onChain: OrderStates): { deliver: ChainFact } | { drifts: ChainDrift[] } {
  const deliver = CHAIN_FACTS.find((fact) => fact.shownBy.includes(onChain[fact.contract]) && transition(state, fact.machineEvent).ok);
  if (deliver) return { deliver };
  const drifts: ChainDrift[] = [];
  if (state.status !== 'PENDING' && onChain.OrderPortal === 'None') drifts.push('deposit-missing');
  if (state.status === 'LOCKED' && onChain.AdManager === 'None') drifts.push('lock-missing');
  if ((state.status === 'DEPOSITED' || state.status === 'LOCKED') && onChain.OrderPortal === 'Refunded') drifts.push('deposit-refunded');
  return { drifts };
}
