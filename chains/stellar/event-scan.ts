import type { rpc } from '@stellar/stellar-sdk';
import { RpcUnavailableError } from '../errors.ts';

/**
 * The ledger a Soroban RPC `getEvents` cursor (or event id) points into. Both are
 * "<TOID>-<event index>", the TOID being ledger << 32 | transaction << 12 | operation (SEP-35);
 * undefined for anything else.
 */
export function cursorLedger(cursor: string): number | undefined {
  const match = /^(\d{1,19})-(\d{1,10})$/.exec(cursor);
  if (!match) return undefined;
  return Number(BigInt(match[1]!) >> 32n);
}

/** How a scan ended: every ledger of the range was searched, `visit` asked to stop, or the range starts before the RPC's retention. */
export type ScanOutcome = 'searched' | 'stopped' | 'outside-retention';

/** Soroban RPC's refusal of a startLedger outside its retention window (older and newer wordings). */
const OUTSIDE_RETENTION = /startLedger must be (between|within)/i;

/**
 * Hands every event matching `filters` in ledgers `fromLedger..toLedger` (inclusive) to `visit`,
 * in chain order, until `visit` returns true. A Soroban RPC scans at most a fixed number of ledgers
 * per request (stellar-rpc's LedgerScanLimit, 10,000 ledgers, about 14 hours) and answers a cursor:
 * the last event's id when the page is full, otherwise the end of the window it scanned. So a page
 * with no events says nothing about the ledgers after its window: the cursor is followed until the
 * window it names reaches `toLedger`, and only then is the range 'searched'. A cursor that cannot be
 * read or does not move on is an RPC this reader cannot trust: `RpcUnavailableError`, as for any
 * failed request.
 */
export async function scanStellarEvents(
  server: rpc.Server,
  query: { filters: rpc.Api.EventFilter[]; fromLedger: number; toLedger: number; pageSize: number },
  visit: (event: rpc.Api.EventResponse) => boolean | void,
): Promise<ScanOutcome> {
  const { filters, fromLedger, toLedger, pageSize: limit } = query;
  let cursor: string | undefined;
  for (;;) {
    let page: rpc.Api.GetEventsResponse;
    try {
      // endLedger is exclusive in Soroban RPC; it may not be sent beside a cursor.
      page = await server.getEvents(cursor ? { filters, cursor, limit } : { filters, startLedger: fromLedger, endLedger: toLedger + 1, limit });
    } catch (error) {
      const message = (error as Error).message ?? '';
      if (cursor === undefined && OUTSIDE_RETENTION.test(message)) return 'outside-retention';
      throw new RpcUnavailableError(`Soroban RPC failed on getEvents: ${message}`, { cause: error });
    }
    for (const event of page.events) {
      if (event.ledger > toLedger) return 'searched';
      if (visit(event)) return 'stopped';
    }
    const reached = page.cursor ? cursorLedger(page.cursor) : undefined;
    if (reached === undefined) {
      throw new RpcUnavailableError(`Soroban RPC answered getEvents with no cursor to follow ` +
        `('${page.cursor ?? ''}'): ledgers ${fromLedger}..${toLedger} cannot be known searched`);
    }
    if (reached >= toLedger) return 'searched';
    if (page.cursor === cursor) throw new RpcUnavailableError(`Soroban RPC getEvents does not move past cursor ${cursor} (ledger ${reached} of ${toLedger})`);
    cursor = page.cursor;
  }
}
