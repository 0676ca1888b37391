import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { consumeEventStreamTicket, insertEventStreamTicket, spendEventStreamTickets, type TicketRefusal } from '../db/repositories/event-stream-tickets.ts';
import type { Principal } from '../domain/principal.ts';
import { SignInRejected } from './errors.ts';

/** A ticket as the caller gets it. */
export interface IssuedTicket {
  ticket: string;
  expiresAt: Date;
}

/** What a spent ticket opens: the user's stream, for the session that asked, until `streamUntil`. */
export interface TicketHolder {
  userId: string;
  sessionId: string;
  streamUntil: Date;
}

const REFUSALS: Record<TicketRefusal, string> = {
  unknown: 'ticket is not known: ask POST /v1/events/ticket for one',
  used: 'ticket was already used (a ticket opens one stream): ask POST /v1/events/ticket for a new one',
  expired: 'ticket expired: ask POST /v1/events/ticket for a new one',
  session_ended: 'ticket belongs to a session that was revoked or reached its maximum age: sign in again',
};

/** Tickets are 32 random bytes, base64url: 43 characters. */
const TICKET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const hashTicket = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

/**
 * Single-use stream tickets: what a browser's EventSource (which cannot send an Authorization
 * header) presents as `?ticket=` to open the caller's event stream. A ticket stands for the session
 * that asked for it, for `ttlSeconds` at most and never past the access token that asked; it opens
 * one stream, which ends when that access token would have expired or when the session is revoked.
 * Only its SHA-256 hash is stored.
 */
export function createStreamTickets(deps: { knex: Knex; ttlSeconds: number }) {
  return {
    /** A new ticket for the caller's session, living `ttlSeconds` or until `tokenExpiresAt`, whichever comes first. */
    async issue(principal: Principal, tokenExpiresAt: Date): Promise<IssuedTicket> {
      const ticket = randomBytes(32).toString('base64url');
      const expiresAt = new Date(Math.min(Date.now() + deps.ttlSeconds * 1000, tokenExpiresAt.getTime()));
      await insertEventStreamTicket(deps.knex, {
        ticketHash: hashTicket(ticket), sessionId: principal.sessionId, userId: principal.userId, expiresAt, streamUntil: tokenExpiresAt,
      });
      return { ticket, expiresAt };
    },

    /**
     * Spends `ticket` (one statement: of concurrent uses, one wins) and returns what it opens.
     * Throws `SignInRejected` naming the ticket when it is malformed, unknown, used, expired, or
     * its session is over.
     */
    async redeem(ticket: string): Promise<TicketHolder> {
      if (!TICKET_SHAPE.test(ticket)) throw new SignInRejected(REFUSALS.unknown);
      const spent = await consumeEventStreamTicket(deps.knex, hashTicket(ticket));
      if (!spent.ok) throw new SignInRejected(REFUSALS[spent.refusal]);
      return { userId: spent.userId, sessionId: spent.sessionId, streamUntil: spent.streamUntil };
    },

    /**
     * Spends `tickets` without opening anything: once it resolves, none of them opens a stream.
     * For a request that presented them and was refused for another reason (its Last-Event-ID, a
     * stream limit): its URL may sit in a log or a proxy's history, and must not open a stream later.
     */
    async revoke(tickets: string[]): Promise<void> {
      await spendEventStreamTickets(deps.knex, tickets.filter((ticket) => TICKET_SHAPE.test(ticket)).map(hashTicket));
    },
  };
}

export type StreamTickets = ReturnType<typeof createStreamTickets>;
