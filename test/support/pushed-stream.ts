import { expect } from 'vitest';
import { openSse, type SseMessage } from './sse-client.ts';

/**
 * What a settled trade pushed, read back as a dApp and the parties' bots would: the trade's
 * server-sent events stream replayed from the start, and each party's own `/v1/events` feed.
 * Shared by the whole-trade tests of every chain pairing, so a Stellar trade is held to the same
 * stream as an EVM one (test/trades/trades-pushed.test.ts).
 */

/** One event (as a webhook body or a server-sent event's data) as a short step name: its type, the side of a claim or due unlock, the status reached. */
export const stepName = (event: { type: string; data: Record<string, any> }): string =>
  event.type + (event.data.side ? `:${event.data.side}` : '') + (event.type === 'trade.status_changed' ? `:${event.data.status}` : '');

/** `stepName` of a server-sent event. */
export const stepOf = (m: SseMessage): string => stepName(m.data);

/** Checks a settled trade's steps are every step of a whole trade in the lifecycle's order (the proof and the lock may race). */
export function expectWholeTradeSteps(steps: string[]): void {
  expect(steps.slice(0, 2)).toEqual(['trade.created', 'trade.status_changed:DEPOSITED']);
  expect(new Set(steps.slice(2, 4))).toEqual(new Set(['trade.proof_ready', 'trade.status_changed:LOCKED']));
  expect(steps.slice(4)).toEqual(['trade.unlock_due:ad', 'trade.claimed:ad', 'trade.unlock_due:order', 'trade.claimed:order', 'trade.status_changed:SETTLED']);
}

/**
 * Checks that the settled trade `tradeId` pushed every step of a whole trade, in the order the
 * lifecycle takes them (the proof and the lock may race), numbered 1, 2, 3... with no gap; that its
 * stream ends by itself after SETTLED; that `trade.created` carries both amounts of the order; and
 * that each token's `/v1/events` feed (the Maker's, the Bridger's) holds the same events, in the
 * same order, within a feed numbered with no gap. Returns the trade's stream.
 */
export async function expectSettledTradePushed(
  baseUrl: string, tradeId: string, amounts: { orderAmount: string; adAmount: string }, partyTokens: string[],
): Promise<SseMessage[]> {
  const replay = await openSse(`${baseUrl}/v1/trades/${tradeId}/events?lastEventId=0`);
  expect(replay.status).toBe(200);
  await replay.ended; // the service ends it after SETTLED
  const stream = replay.messages;
  expect(stream.map((m) => m.id)).toEqual(stream.map((_, i) => i + 1));
  expectWholeTradeSteps(stream.map(stepOf));
  expect(stream[0]!.data.data).toMatchObject({ tradeId, status: 'PENDING', amount: amounts.orderAmount, ...amounts });
  expect(stream.at(-1)!.data.data).toMatchObject({ tradeId, status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true, unlockDue: null });

  for (const token of partyTokens) {
    const feed = await openSse(`${baseUrl}/v1/events?lastEventId=0`, { authorization: `Bearer ${token}` });
    expect(feed.status).toBe(200);
    const ofTrade = () => feed.messages.filter((m) => m.data.data.tradeId === tradeId);
    await untilTrue(() => ofTrade().length >= stream.length, `the party's feed to carry the trade's ${stream.length} events`);
    feed.abort();
    expect(feed.messages.map((m) => m.id)).toEqual(feed.messages.map((_, i) => i + 1));
    expect(ofTrade().map((m) => [m.event, m.data.data])).toEqual(stream.map((m) => [m.event, m.data.data]));
  }
  return stream;
}

/**
 * Waits for `condition`, checked every 100 ms, and throws naming `what` after `timeoutMs`. Not
 * vitest's expect.poll: the suites that use this run their orchestrators' tests side by side
 * (concurrently), where expect.poll may find no current test and throw.
 */
async function untilTrue(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
