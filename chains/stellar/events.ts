import { StrKey, scValToNative, xdr } from '@stellar/stellar-sdk';
import { TIMEOUT_EVENTS, type BridgeEventName } from '../evm/abi.ts';

/**
 * How a Stellar AdManager/OrderPortal reports what the service checks (chains/README.md):
 *   topic 0: Symbol, the event name (the EVM names: AdCreated, AdFunded, AdWithdrawn, AdClosed,
 *            OrderCreated, OrderLocked, OrderUnlocked)
 *   topic 1: BytesN<32>, the request hash (reqHash) the relayer signed
 *   topic 2: BytesN<32>, the adId (Ad* events) or the orderHash (Order* events)
 *   data:    Map of Symbol -> value for the remaining fields (amounts as i128, tree values as U256)
 * The timeouts (OrderRefunded, LockReleased) answer no relayer request: topics `[Symbol(name),
 * BytesN<32> orderHash]` only, and so no reqHash among their arguments.
 */
export interface DecodedStellarEvent {
  contractId: string;
  event: string;
  /** reqHash, adId/orderHash as 0x hex, data fields as strings (integers in decimal). */
  args: Record<string, string>;
}

/** The name of the event's 32-byte key topic: ads are keyed by adId, orders by orderHash. */
export function keyTopicName(event: BridgeEventName | string): 'adId' | 'orderHash' {
  return event.startsWith('Ad') ? 'adId' : 'orderHash';
}

/** Decodes a contract event in the layout above, or null when it is not one (other contracts' events, other shapes). */
export function decodeBridgeEvent(event: xdr.ContractEvent): DecodedStellarEvent | null {
  const contractHash = event.contractId();
  if (!contractHash || event.type() !== xdr.ContractEventType.contract()) return null;
  const body = event.body().v0();
  const contractId = StrKey.encodeContract(Buffer.from(contractHash as unknown as Uint8Array));
  return decodeBridgeTopics(contractId, body.topics(), body.data());
}

/** `decodeBridgeEvent` for an event already split into contract, topics and data (as `getEvents` returns it). */
export function decodeBridgeTopics(contractId: string, topics: xdr.ScVal[], data: xdr.ScVal): DecodedStellarEvent | null {
  const [name] = topics;
  if (!name || name.switch() !== xdr.ScValType.scvSymbol()) return null;
  const eventName = name.sym().toString();
  const timeout = TIMEOUT_EVENTS.has(eventName as BridgeEventName);
  // A timeout's two topics, a request's three: any other count is not one of these events.
  const [reqHash, key] = timeout ? [undefined, topics[1]] : [topics[1], topics[2]];
  if (timeout ? topics.length !== 2 : topics.length < 3) return null;
  if (!key || key.switch() !== xdr.ScValType.scvBytes()) return null;
  if (!timeout && (!reqHash || reqHash.switch() !== xdr.ScValType.scvBytes())) return null;
  const args: Record<string, string> = { [keyTopicName(eventName)]: `0x${key.bytes().toString('hex')}` };
  if (reqHash) args.reqHash = `0x${reqHash.bytes().toString('hex')}`;
  if (data.switch() === xdr.ScValType.scvMap()) {
    for (const entry of data.map() ?? []) {
      if (entry.key().switch() !== xdr.ScValType.scvSymbol()) continue;
      const field = entry.key().sym().toString();
      // Topics are what the service matches on: a data field of the same name never replaces one.
      if (field in args) continue;
      args[field] = stringifyNative(scValToNative(entry.val()));
    }
  }
  return { contractId, event: eventName, args };
}

function stringifyNative(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `0x${Buffer.from(value).toString('hex')}`;
  return String(value);
}

/**
 * Every contract event of a transaction's meta: per-operation events of meta v4 (protocol 23+)
 * or the Soroban meta events of v3.
 */
export function contractEventsOfMeta(meta: xdr.TransactionMeta): xdr.ContractEvent[] {
  switch (meta.switch()) {
    case 3:
      return meta.v3().sorobanMeta()?.events() ?? [];
    case 4:
      return meta.v4().operations().flatMap((operation) => operation.events());
    default:
      return [];
  }
}
