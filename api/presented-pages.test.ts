import { describe, expect, it } from 'vitest';
import { pageEtag, weakEtag } from './http-cache.ts';
import { PresentedPages } from './presented-pages.ts';

const page = (nextCursor: string | null, ...rows: [string, string][]) => ({ nextCursor, items: rows.map(([id, version]) => ({ id, version })) });

describe('PresentedPages', () => {
  it('finds a body only for exactly its generation, end, ids and versions, with the ETag the page always had', () => {
    const pages = new PresentedPages();
    const first = page('c1', ['a', '1'], ['b', '1']);
    expect(pages.find('g1', first)).toBeUndefined();
    const kept = pages.keep('g1', first, '{"data":["é"],"nextCursor":"c1"}');
    expect(kept.body.equals(Buffer.from('{"data":["é"],"nextCursor":"c1"}', 'utf8'))).toBe(true);
    expect(kept.etag).toBe(weakEtag(['g1', 'c1', 'a@1', 'b@1']));
    expect(pages.find('g1', page('c1', ['a', '1'], ['b', '1']))).toBe(kept);

    // Any row written since (another version), another registry generation, another end, fewer or other rows: not this body.
    for (const [generation, other] of [
      ['g1', page('c1', ['a', '1'], ['b', '2'])],
      ['g1', page('c1', ['a', '2'], ['b', '1'])],
      ['g2', page('c1', ['a', '1'], ['b', '1'])],
      ['g1', page(null, ['a', '1'], ['b', '1'])],
      ['g1', page('c1', ['a', '1'])],
      ['g1', page('c1', ['a', '1'], ['x', '1'])],
    ] as const) {
      expect(pages.find(generation, other)).toBeUndefined();
      expect(pageEtag(generation, other)).not.toBe(kept.etag);
    }
    // A newer version of the same place replaces the old body.
    const newer = pages.keep('g1', page('c1', ['a', '1'], ['b', '2']), '{"newer":true}');
    expect(pages.find('g1', page('c1', ['a', '1'], ['b', '2']))).toBe(newer);
    expect(pages.find('g1', first)).toBeUndefined();
  });

  it('keeps at most maxBytes of bodies, forgetting the least recently stored', () => {
    const pages = new PresentedPages(10);
    const at = (id: string) => page(null, [id, '1']);
    pages.keep('g', at('a'), '12345');
    pages.keep('g', at('b'), '12345');
    pages.keep('g', at('c'), '1234');
    expect(pages.find('g', at('a'))).toBeUndefined();
    expect(pages.find('g', at('b'))?.body.toString()).toBe('12345');
    expect(pages.find('g', at('c'))?.body.toString()).toBe('1234');
    // A body larger than the whole budget is answered but not kept.
    expect(pages.keep('g', at('d'), '12345678901').body.length).toBe(11);
    expect(pages.find('g', at('d'))).toBeUndefined();
    expect(pages.find('g', at('b'))).toBeDefined();
  });
});
