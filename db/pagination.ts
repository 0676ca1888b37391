import type { Knex } from 'knex';
import { DomainError, isUuid } from '../domain/index.ts';
import { statement, type Statement } from './prepared.ts';

/** Position of the last row of a page in the (created_at DESC, id DESC) order every list uses. */
export interface CursorPosition {
  createdAt: string;
  id: string;
}

/** Raised for a cursor this service did not issue; the API answers 422 naming `cursor`. */
export class InvalidCursorError extends DomainError {
  readonly code = 'INVALID_CURSOR';
  readonly kind = 'invalid';
  constructor(message: string) {
    super(message, { field: 'cursor' });
  }
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(?:([+-])(\d{2})(?::?(\d{2}))?|Z)$/;

/**
 * True when `value` has the shape PostgreSQL prints a timestamptz in (or ISO 8601) and names an
 * instant that exists: month 1..12, a day the month has (leap years included), hour < 24,
 * minute and second < 60, offset within ±15:59, year from 1. PostgreSQL refuses anything else with an
 * error, which must not be the first place an impossible date is noticed.
 */
export function isRealTimestamp(value: string): boolean {
  const match = TIMESTAMP.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = match[9] === undefined ? 0 : Number(match[9]);
  const offsetMinutes = match[10] === undefined ? 0 : Number(match[10]);
  if (year < 1 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  if (offsetHours > 15 || offsetMinutes > 59) return false;
  // Day 0 of the next month is the last day of this one (Date.UTC handles leap years; years < 100 are shifted).
  const last = new Date(Date.UTC(2000, month, 0));
  last.setUTCFullYear(year, month, 0);
  return day >= 1 && day <= last.getUTCDate();
}

/**
 * Opaque to clients: base64url of the list it pages (the table), the last row's exact timestamp
 * (microseconds) and id. The list's name makes a cursor of one list useless to another: a position
 * among ads means nothing among trades.
 */
export function encodeCursor(position: CursorPosition, list: string): string {
  return Buffer.from(JSON.stringify([list, position.createdAt, position.id])).toString('base64url');
}

/** The position a cursor of `list` names, or `InvalidCursorError` (422 naming cursor). */
export function decodeCursor(cursor: string, list: string): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('cursor is not a cursor this service issued');
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw new InvalidCursorError('cursor is not a cursor this service issued');
  const [of, createdAt, id] = parsed;
  if (typeof of !== 'string' || typeof createdAt !== 'string' || !isRealTimestamp(createdAt) || !isUuid(id)) {
    throw new InvalidCursorError('cursor is not a cursor this service issued');
  }
  if (of !== list) throw new InvalidCursorError(`cursor pages another list (${of.slice(0, 32)}), not ${list}: pass back this list's own nextCursor`);
  return { createdAt, id };
}

/**
 * A cursor for an append-only log ordered by its bigint id, newest first (the webhook delivery
 * log): opaque like `encodeCursor`, base64url of the list's name and the last row's id.
 */
export function encodeSequenceCursor(id: string, list: string): string {
  return Buffer.from(JSON.stringify([list, id])).toString('base64url');
}

/** The id a `encodeSequenceCursor` cursor of `list` names, or `InvalidCursorError` (422 naming cursor). */
export function decodeSequenceCursor(cursor: string, list: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('cursor is not a cursor this service issued');
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw new InvalidCursorError('cursor is not a cursor this service issued');
  const [of, id] = parsed;
  if (typeof of !== 'string' || typeof id !== 'string' || !/^[1-9][0-9]{0,18}$/.test(id)) {
    throw new InvalidCursorError('cursor is not a cursor this service issued');
  }
  if (of !== list) throw new InvalidCursorError(`cursor pages another list (${of.slice(0, 32)}), not ${list}: pass back this list's own nextCursor`);
  return id;
}

/**
 * Applies keyset pagination to a query over `table`: newest first, then by id, starting after
 * the cursor. The row comparison matches the (…, created_at DESC, id DESC) indexes, so a page is
 * one index range scan however deep it is, and rows inserted between pages are never skipped or
 * repeated. Fetches one row more than `limit` to know whether a next page exists.
 */
export function paginate(query: Knex.QueryBuilder, table: string, limit: number, cursor?: string): Knex.QueryBuilder {
  if (cursor !== undefined) {
    const position = decodeCursor(cursor, table);
    query.whereRaw(`(??, ??) < (?::timestamptz, ?::uuid)`, [`${table}.created_at`, `${table}.id`, position.createdAt, position.id]);
  }
  // created_at as text keeps PostgreSQL's microseconds, which a JS Date would round away.
  return query
    .select(query.client.raw(`??::text AS cursor_created_at`, [`${table}.created_at`]))
    .orderBy([{ column: `${table}.created_at`, order: 'desc' }, { column: `${table}.id`, order: 'desc' }])
    .limit(limit + 1);
}

/** Collects a statement's values and answers each one's `$n` placeholder, in the order they appear. */
export function parameters(): { values: unknown[]; param: (value: unknown) => string } {
  const values: unknown[] = [];
  return { values, param: (value) => `$${values.push(value)}` };
}

/**
 * `paginate` for statements written as SQL (hot reads skip the query builder): the page query
 * over `table` with `select` and the `conditions` (ANDed, their values already given to `param`),
 * newest first after the cursor, one row more than `limit`. `from` may join more (a lateral view).
 */
export function pageSql(
  table: string, select: string, conditions: string[], param: (value: unknown) => string, limit: number, cursor?: string, from = table,
): string {
  const where = [...conditions];
  if (cursor !== undefined) {
    const position = decodeCursor(cursor, table);
    where.push(`(${table}.created_at, ${table}.id) < (${param(position.createdAt)}::timestamptz, ${param(position.id)}::uuid)`);
  }
  return `select ${select}, ${table}.created_at::text AS cursor_created_at from ${from}`
    + (where.length > 0 ? ` where ${where.join(' and ')}` : '')
    + ` order by ${table}.created_at desc, ${table}.id desc limit ${param(limit + 1)}`;
}

/** One page of a list and the cursor of the next one (null on the last page). */
export interface Page<Item> {
  items: Item[];
  nextCursor: string | null;
}

/** A row's id and what identifies this version of it (changes with every committed write to the row). */
export interface RowVersion {
  id: string;
  version: string;
}

/** Splits the fetched rows of `list` (its table) into the page and its `nextCursor`. */
export function toPage<Row extends { id: string; cursor_created_at: string }>(rows: Row[], limit: number, list: string): Page<Row> {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1]!;
  return { items, nextCursor: encodeCursor({ createdAt: last.cursor_created_at, id: last.id }, list) };
}

/** A page in id order for a sweep over a table (the books audit): ids after `after` (all when null), at most `limit`. */
export interface IdPage {
  after: string | null;
  limit: number;
}

export interface IdPageResult<T> {
  rows: T[];
  /** How many rows of the same query follow the page: 0 when the sweep reached the end. */
  left: number;
}

/**
 * One page of `query()` (a fresh, filtered query on one table each call) in id order after
 * `page.after`, and a count of the rows after the page, for a sweep that continues in a later
 * call: both read with the same filter, so "left" means exactly what the next pages will hold.
 */
export async function idPage<T extends { id: string }>(query: () => Knex.QueryBuilder, page: IdPage): Promise<IdPageResult<T>> {
  const after = (q: Knex.QueryBuilder, id: string | null) => (id === null ? q : q.andWhere('id', '>', id));
  const rows: T[] = await after(query(), page.after).orderBy('id').limit(page.limit);
  const last = rows.length > 0 ? rows[rows.length - 1]!.id : page.after;
  const counted = await after(query().clearSelect().clearOrder(), last).count({ n: '*' }).first();
  return { rows, left: Number((counted as { n: string } | undefined)?.n ?? 0) };
}

/**
 * `pageSql` prepared once per query shape, for hot reads: the statement of a page over `table`
 * with `select` is found by its conditions (short, their placeholders included) and whether it
 * starts after a cursor, so a request neither writes out nor hashes the whole select list again
 * (hashing the SQL text to find its statement was 4 % of `GET /v1/ads`'s busy samples). Gives
 * `param` the cursor's and the limit's values, in the order `pageSql` does.
 */
export function pageStatements(table: string, select: string, from = table) {
  const shapes = new Map<string, Statement>();
  return (conditions: string[], param: (value: unknown) => string, limit: number, cursor?: string): Statement => {
    const shape = `${cursor === undefined ? 'first' : 'after'} ${conditions.join(' and ')}`;
    const found = shapes.get(shape);
    if (found === undefined) {
      const made = statement(pageSql(table, select, conditions, param, limit, cursor, from));
      shapes.set(shape, made);
      return made;
    }
    if (cursor !== undefined) {
      const position = decodeCursor(cursor, table);
      param(position.createdAt);
      param(position.id);
    }
    param(limit + 1);
    return found;
  };
}
