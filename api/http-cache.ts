import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Page, RowVersion } from '../db/pagination.ts';

/**
 * How long a browser or shared cache may reuse a public read without asking again. Short: ads'
 * balances move with every trade. The service itself keeps no response cache, so any request that
 * reaches it (a revalidation included) sees every committed write.
 */
export const PUBLIC_MAX_AGE_SECONDS = 5;

/**
 * A weak ETag over what identifies a representation (ids, row versions, the registry's version),
 * never over its serialised body: a revalidation that matches is answered before any body is built.
 */
export function weakEtag(parts: readonly string[]): string {
  return `W/"${createHash('sha1').update(parts.join('\n')).digest('base64url')}"`;
}

/** The weak ETag of a list page: its rows' versions, where it ends, and what else they nest (`generation`). */
export function pageEtag(generation: string, page: Page<RowVersion>): string {
  return weakEtag([generation, page.nextCursor ?? '', ...page.items.map((row) => `${row.id}@${row.version}`)]);
}

/**
 * Marks a public read cacheable for PUBLIC_MAX_AGE_SECONDS under `etag`, and answers 304 (no
 * body) when the request's If-None-Match already names it. True when it answered: the caller stops.
 */
export function answeredNotModified(req: Request, res: Response, etag: string): boolean {
  res.setHeader('Cache-Control', `public, max-age=${PUBLIC_MAX_AGE_SECONDS}`);
  res.setHeader('ETag', etag);
  if (!req.fresh) return false;
  res.status(304).end();
  return true;
}

/** A read whose answer depends on the caller (their own pending ads): no cache may keep or share it. */
export function privateRead(res: Response): void {
  res.setHeader('Cache-Control', 'private, no-store');
}

/**
 * Sends JSON that is already text (a page spliced from PostgreSQL's JSON). Written as a string:
 * Express's `send` would first copy a body over 1 KB into a Buffer of its own.
 */
export function sendJsonText(res: Response, text: string): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** `sendJsonText` for JSON already encoded as UTF-8 (a kept page): the same headers, nothing encoded or measured again. */
export function sendJsonBytes(res: Response, body: Buffer): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
