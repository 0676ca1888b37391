import { EVENT_OF_ACTION, EVENT_OF_TIMEOUT, type BridgeEventName } from './evm/abi.ts';
import type { TimeoutAction } from './adapter.ts';
import type { ActionName } from './request-schema.ts';

/** The event a signed action or a timeout emits, the same name on every chain kind. */
export function eventOf(action: ActionName | TimeoutAction): BridgeEventName {
  return action in EVENT_OF_TIMEOUT ? EVENT_OF_TIMEOUT[action as TimeoutAction] : EVENT_OF_ACTION[action as ActionName];
}
