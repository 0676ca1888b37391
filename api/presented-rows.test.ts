import { describe, expect, it } from 'vitest';
import { PresentedRows } from './presented-rows.ts';

interface Row { id: string; version: string; name: string }

describe('PresentedRows', () => {
  it('reuses a text only for the same row version and generation', () => {
    const rows = new PresentedRows<Row>();
    let presented = 0;
    const present = (row: Row) => { presented += 1; return { id: row.id, name: row.name }; };
    const a1 = { id: 'a', version: '1', name: 'first' };
    expect(rows.known([a1], 'g1')).toBeUndefined();
    expect(rows.text(a1, 'g1', present)).toBe('{"id":"a","name":"first"}');
    expect(rows.known([a1], 'g1')).toEqual(['{"id":"a","name":"first"}']);
    expect(rows.text(a1, 'g1', present)).toBe('{"id":"a","name":"first"}');
    expect(presented).toBe(1);

    // A new version, or the same version under another generation (the registry changed): presented again.
    expect(rows.known([{ id: 'a', version: '2' }], 'g1')).toBeUndefined();
    expect(rows.known([a1], 'g2')).toBeUndefined();
    expect(rows.text({ id: 'a', version: '2', name: 'second' }, 'g1', present)).toBe('{"id":"a","name":"second"}');
    expect(presented).toBe(2);
    // One unknown row on a page: the page is not known.
    expect(rows.known([{ id: 'a', version: '2' }, { id: 'b', version: '1' }], 'g1')).toBeUndefined();
  });

  it('keeps at most its capacity, forgetting the least recently stored', () => {
    const rows = new PresentedRows<Row>(2);
    const present = (row: Row) => row.name;
    rows.textsOf([{ id: 'a', version: '1', name: 'a' }, { id: 'b', version: '1', name: 'b' }, { id: 'c', version: '1', name: 'c' }], 'g', present);
    expect(rows.known([{ id: 'a', version: '1' }], 'g')).toBeUndefined();
    expect(rows.known([{ id: 'b', version: '1' }, { id: 'c', version: '1' }], 'g')).toEqual(['"b"', '"c"']);
  });
});
