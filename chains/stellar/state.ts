import { rpc, xdr } from '@stellar/stellar-sdk';
import { TIMEOUT_EVENTS, type BridgeEventName } from '../evm/abi.ts';
import { RpcUnavailableError } from '../errors.ts';
import { scanStellarEvents } from './event-scan.ts';

/** Ledgers close about every 5 seconds; the search starts this much further back to be safe. */
const SECONDS_PER_LEDGER = 5;
const MARGIN_LEDGERS = 120;

/**
 * The transaction in which `contractId` emitted `event` with the given reqHash (topic 1) and/or
 * key (topic 2: adId or orderHash; chains/stellar/events.ts), searched with Soroban RPC `getEvents` from about `since`
 * to the ledger that was latest when the search began, following the RPC's cursor across its
 * per-request scan limit (event-scan.ts): a hash when found, `null` only when every ledger of that
 * range was searched and holds none, undefined when the range starts before the RPC's retention
 * window (the chain cannot tell). Throws `RpcUnavailableError`.
 */
export async function findStellarEventTransaction(
  server: rpc.Server, contractId: string, event: BridgeEventName, topics: { key?: string; reqHash?: string }, since: Date, now = Date.now(),
): Promise<string | null | undefined> {
  let latest: number;
  try {
    latest = (await server.getLatestLedger()).sequence;
  } catch (error) {
    throw new RpcUnavailableError(`Soroban RPC failed on getLatestLedger: ${(error as Error).message}`, { cause: error });
  }
  const back = Math.ceil(Math.max(0, now - since.getTime()) / 1000 / SECONDS_PER_LEDGER) + MARGIN_LEDGERS;
  const fromLedger = Math.max(1, latest - back);
  const bytes = (hex: string | undefined) => (hex ? xdr.ScVal.scvBytes(Buffer.from(hex.replace(/^0x/, ''), 'hex')).toXDR('base64') : '*');
  // A timeout's event has no reqHash topic: `[name, orderHash]` (chains/stellar/events.ts).
  const topic = TIMEOUT_EVENTS.has(event)
    ? [xdr.ScVal.scvSymbol(event).toXDR('base64'), bytes(topics.key)]
    : [xdr.ScVal.scvSymbol(event).toXDR('base64'), bytes(topics.reqHash), bytes(topics.key)];
  const filters: rpc.Api.EventFilter[] = [{ type: 'contract', contractIds: [contractId], topics: [topic] }];
  let found: string | undefined;
  const outcome = await scanStellarEvents(server, { filters, fromLedger, toLedger: latest, pageSize: 100 }, (match) => {
    found = match.txHash;
    return true;
  });
  if (outcome === 'outside-retention') return undefined;
  return found ?? null;
}
