import type { TradeActivities } from '../trades/orchestrator.ts';
import { inSpan } from './spans.ts';

/**
 * The trade activities, each run in a span `activity <name>` (tradeId as attribute) that is a
 * child of the active one: the request that confirms, or the job that proves. For the embedded
 * orchestrator; on Temporal the SDK's activity interceptor makes these spans (temporal.ts).
 * With tracing off each call goes straight through.
 */
export function tracedActivities(activities: TradeActivities): TradeActivities {
  const traced: Record<string, unknown> = { ...activities };
  for (const [name, activity] of Object.entries(activities)) {
    if (typeof activity !== 'function') continue;
    traced[name] = (input?: { tradeId?: string }) =>
      inSpan(`activity ${name}`, { attributes: { 'relayer.trade_id': input?.tradeId } }, () => activity.call(activities, input));
  }
  return traced as unknown as TradeActivities;
}
