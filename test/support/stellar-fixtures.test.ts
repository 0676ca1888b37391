import { StrKey, scValToNative, type xdr } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { HOST_EVENT_FIELDS, hostEvents, hostLayoutEvent, type HostEventName, type HostEventValue } from './stellar-fixtures.ts';

/** The data of a host event as `hostLayoutEvent` takes it. */
function dataOf(event: xdr.ContractEvent): Record<string, HostEventValue> {
  const data: Record<string, HostEventValue> = {};
  for (const entry of event.body().v0().data().map() ?? []) {
    const native = scValToNative(entry.val()) as unknown;
    data[entry.key().sym().toString()] = Buffer.isBuffer(native) ? `0x${native.toString('hex')}` : (native as HostEventValue);
  }
  return data;
}

describe('hostLayoutEvent', () => {
  it('rebuilds every event the Soroban contracts emitted, byte for byte', () => {
    const all = hostEvents();
    expect(new Set(all.map((e) => e.event))).toEqual(new Set(Object.keys(HOST_EVENT_FIELDS)));
    for (const event of all) {
      const contractId = StrKey.encodeContract(Buffer.from(event.xdr.contractId() as unknown as Uint8Array));
      const rebuilt = hostLayoutEvent(contractId, event.event as HostEventName, event.reqHash, event.key, dataOf(event.xdr) as never);
      expect(rebuilt.toXDR('hex'), event.event).toBe(event.xdr.toXDR('hex'));
    }
  });

  it('refuses data that is not exactly the event\'s fields', () => {
    const word = `0x${'00'.repeat(32)}`;
    const contract = StrKey.encodeContract(Buffer.alloc(32, 1));
    expect(() => hostLayoutEvent(contract, 'AdFunded', word, word, { amount: 1n } as never)).toThrow(/missing \[available\]/);
    expect(() => hostLayoutEvent(contract, 'AdFunded', word, word, { amount: 1n, available: 1n, root: 2n } as never)).toThrow(/unknown \[root\]/);
  });
});
