import type { Request, Response } from 'express';
import type { Page, RowVersion } from '../db/pagination.ts';
import { answeredNotModified, pageEtag, privateRead, sendJsonBytes, sendJsonText } from './http-cache.ts';
import { PresentedPages } from './presented-pages.ts';
import { PresentedRows } from './presented-rows.ts';
import { presentPageJson } from './presenters.ts';

/** One list request as the cache protocol needs it: the cheap read, the full read, and how a row is presented. */
export interface ListRead<Row extends RowVersion> {
  /** The page's ids and row versions only (what the owner's query answers first). */
  versions(): Promise<Page<RowVersion>>;
  /** The whole page, read in one snapshot, when a row on it is new or changed. */
  rows(): Promise<Page<Row>>;
  /** The presenter of the page's rows (it may look up what they nest, once per page). */
  presenter(rows: readonly Row[]): Promise<(row: Row) => unknown>;
  /** The answer is the caller's alone (their own pending ads): never shared, kept or revalidated. */
  own?: boolean;
}

/**
 * The representation cache of one list endpoint, the one protocol every list follows: the page's
 * ids and versions are read first; a revalidation naming them is answered 304; a public page of
 * exactly those versions is answered from its kept bytes; otherwise the texts of known row versions
 * are spliced, and only a page with a new or changed row is read whole and presented. What is kept
 * are presentations of exact row versions, never an answer from the past. `generation` names what
 * else a text nests (the registry's version).
 */
export function cachedList<Row extends RowVersion>() {
  const texts = new PresentedRows<Row>();
  const pages = new PresentedPages();
  return {
    /** Answers `read` on `res` (a body, or 304). */
    async send(req: Request, res: Response, generation: () => Promise<string>, freshGeneration: () => string, read: ListRead<Row>): Promise<void> {
      const current = await generation();
      const versions = await read.versions();
      if (read.own) privateRead(res);
      else {
        const kept = pages.find(current, versions);
        if (answeredNotModified(req, res, kept?.etag ?? pageEtag(current, versions))) return;
        if (kept !== undefined) return sendJsonBytes(res, kept.body);
      }
      const known = texts.known(versions.items, current);
      if (known !== undefined) return send(res, current, versions, presentPageJson(known, versions.nextCursor), read.own);
      const page = await read.rows();
      const present = await read.presenter(page.items);
      const fresh = freshGeneration();
      const text = presentPageJson(texts.textsOf(page.items, fresh, present), page.nextCursor);
      if (!read.own) res.setHeader('ETag', pageEtag(fresh, page));
      send(res, fresh, page, text, read.own);
    },
    /** The text of one row (by id reads), reused while its version and generation are current. */
    text(row: Row, generation: string, present: (row: Row) => unknown): string {
      return texts.text(row, generation, present);
    },
  };

  function send(res: Response, generation: string, page: Page<RowVersion>, text: string, own?: boolean): void {
    if (own) return sendJsonText(res, text);
    sendJsonBytes(res, pages.keep(generation, page, text).body);
  }
}
