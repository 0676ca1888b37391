import { etagOfKey } from './http-cache.ts';

/** A page's body as sent (UTF-8 bytes) and its ETag. */
export interface PresentedPage {
  etag: string;
  body: Buffer;
}

/**
 * The bodies of public list pages already answered, by `pageKey` (api/http-cache.ts): the UTF-8 bytes and the ETag of
 * exactly these row versions. A request still reads its page's ids and versions from PostgreSQL
 * (api/routes/ads.ts), so a row written since, by anyone, makes another key and is read afresh;
 * what is kept is the presentation of row versions (as `PresentedRows` keeps each row's text), not
 * an answer from the past. Kept as bytes: encoding a 22 KB page to UTF-8, measuring it and hashing
 * its key for the ETag were, per request, a fifth of the list's own JavaScript (docs/benchmarks.md).
 * At most `maxBytes` of bodies are kept; the least recently stored go first.
 */
export class PresentedPages {
  private readonly pages = new Map<string, PresentedPage>();
  private bytes = 0;

  constructor(private readonly maxBytes = 16 * 1024 * 1024) {}

  /** The page kept under `key`, or undefined. */
  get(key: string): PresentedPage | undefined {
    return this.pages.get(key);
  }

  /** Keeps `text` (a page's JSON) as the body of `key`; returns what was kept. */
  keep(key: string, text: string): PresentedPage {
    const page = { etag: etagOfKey(key), body: Buffer.from(text, 'utf8') };
    const previous = this.pages.get(key);
    if (previous !== undefined) {
      this.pages.delete(key);
      this.bytes -= previous.body.length;
    }
    if (page.body.length > this.maxBytes) return page;
    this.pages.set(key, page);
    this.bytes += page.body.length;
    for (const [oldest, kept] of this.pages) {
      if (this.bytes <= this.maxBytes) break;
      this.pages.delete(oldest);
      this.bytes -= kept.body.length;
    }
    return page;
  }
}
