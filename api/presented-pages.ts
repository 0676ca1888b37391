import type { Page, RowVersion } from '../db/pagination.ts';
import { pageEtag } from './http-cache.ts';

/** A page's body as sent (UTF-8 bytes) and its ETag (`pageEtag` of what identifies it). */
export interface PresentedPage {
  etag: string;
  body: Buffer;
}

interface Kept extends PresentedPage {
  generation: string;
  nextCursor: string | null;
  ids: string[];
  versions: string[];
}

/**
 * The bodies of public list pages already answered, each under exactly what identifies it: what
 * its rows nest (`generation`, the registry's version), where it ends (`nextCursor`) and each row's
 * id and version, the parts of its `pageEtag`. A request still reads its page's ids and versions
 * from PostgreSQL (api/routes/ads.ts), so a row written since, by anyone, no longer matches and is
 * read afresh: what is kept is the presentation of row versions (as `PresentedRows` keeps each
 * row's text), never an answer from the past. Kept as bytes with their ETag: joining a 22 KB page,
 * measuring it, encoding it to UTF-8 and hashing its identity for the ETag, on every request, were
 * most of the list handler's own JavaScript (docs/benchmarks.md, "bench:api"). One body per place in a list (its first row and where it ends),
 * at most `maxBytes` of them; the least recently stored go first.
 */
export class PresentedPages {
  private readonly pages = new Map<string, Kept>();
  private bytes = 0;

  constructor(private readonly maxBytes = 16 * 1024 * 1024) {}

  /** The body kept for exactly this page (same generation, end, ids and versions, in order), or undefined. */
  find(generation: string, page: Page<RowVersion>): PresentedPage | undefined {
    const kept = this.pages.get(placeOf(page));
    if (kept === undefined || kept.generation !== generation || kept.nextCursor !== page.nextCursor || kept.ids.length !== page.items.length) {
      return undefined;
    }
    for (let i = 0; i < page.items.length; i += 1) {
      const row = page.items[i]!;
      if (kept.ids[i] !== row.id || kept.versions[i] !== row.version) return undefined;
    }
    return kept;
  }

  /** Keeps `text`, the JSON of exactly this page, as its body (replacing another version of its place); returns what was kept. */
  keep(generation: string, page: Page<RowVersion>, text: string): PresentedPage {
    const kept: Kept = {
      etag: pageEtag(generation, page),
      body: Buffer.from(text, 'utf8'),
      generation,
      nextCursor: page.nextCursor,
      ids: page.items.map((row) => row.id),
      versions: page.items.map((row) => row.version),
    };
    const place = placeOf(page);
    const previous = this.pages.get(place);
    if (previous !== undefined) {
      this.pages.delete(place);
      this.bytes -= previous.body.length;
    }
    if (kept.body.length > this.maxBytes) return kept;
    this.pages.set(place, kept);
    this.bytes += kept.body.length;
    for (const [oldest, { body }] of this.pages) {
      if (this.bytes <= this.maxBytes) break;
      this.pages.delete(oldest);
      this.bytes -= body.length;
    }
    return kept;
  }
}

/** Where a page is in its list: its first row and where it ends (short, unlike the whole identity). */
function placeOf(page: Page<RowVersion>): string {
  return `${page.items[0]?.id ?? ''}\n${page.nextCursor ?? ''}`;
}
