import { describe, expect, it } from 'vitest';
import { etagOfKey, pageEtag, pageKey, weakEtag } from './http-cache.ts';
import { PresentedPages } from './presented-pages.ts';

const page = (nextCursor: string | null, ...rows: [string, string][]) => ({ nextCursor, items: rows.map(([id, version]) => ({ id, version })) });

describe('PresentedPages', () => {
  it('keeps a body under exactly the key of its generation, cursor and row versions, with the ETag of that key', () => {
    const pages = new PresentedPages();
    const key = pageKey('g1', page('c1', ['a', '1'], ['b', '1']));
    expect(pages.get(key)).toBeUndefined();
    const kept = pages.keep(key, '{"data":["é"],"nextCursor":"c1"}');
    expect(kept.body.equals(Buffer.from('{"data":["é"],"nextCursor":"c1"}', 'utf8'))).toBe(true);
    // The same ETag the page had before bodies were kept: weakEtag over the same parts.
    expect(kept.etag).toBe(weakEtag(['g1', 'c1', 'a@1', 'b@1']));
    expect(kept.etag).toBe(pageEtag('g1', page('c1', ['a', '1'], ['b', '1'])));
    expect(pages.get(key)).toBe(kept);

    // Any row written since (another version), another registry generation or another end: not this body.
    for (const other of [
      pageKey('g1', page('c1', ['a', '2'], ['b', '1'])),
      pageKey('g2', page('c1', ['a', '1'], ['b', '1'])),
      pageKey('g1', page(null, ['a', '1'], ['b', '1'])),
      pageKey('g1', page('c1', ['a', '1'])),
    ]) {
      expect(pages.get(other)).toBeUndefined();
      expect(etagOfKey(other)).not.toBe(kept.etag);
    }
  });

  it('keeps at most maxBytes of bodies, forgetting the least recently stored', () => {
    const pages = new PresentedPages(10);
    pages.keep('a', '12345');
    pages.keep('b', '12345');
    pages.keep('c', '1234');
    expect(pages.get('a')).toBeUndefined();
    expect(pages.get('b')?.body.toString()).toBe('12345');
    expect(pages.get('c')?.body.toString()).toBe('1234');
    // A body larger than the whole budget is answered but not kept.
    expect(pages.keep('d', '12345678901').body.length).toBe(11);
    expect(pages.get('d')).toBeUndefined();
    expect(pages.get('b')).toBeDefined();
  });
});
