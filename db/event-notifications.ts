import type { Knex } from 'knex';
import pg from 'pg';
import { PUSHED_EVENTS_CHANNEL, type PushedEventsNotice } from './repositories/pushed-events.ts';

export interface PushedEventsListener {
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Called with each committed batch's notice, from whichever process committed it. */
  onNotice(notice: PushedEventsNotice): void;
  /**
   * Called after the listening connection was (re)established: notices sent while it was down are
   * lost, so the caller reads what it may have missed from the outbox.
   */
  onConnected(): void;
  onError?(error: unknown): void;
  /** Wait before reconnecting after the connection dropped (default 1 s). */
  reconnectDelayMs?: number;
}

/**
 * LISTENs on the outbox's channel on a connection of its own (not one of the pool's, which would
 * be held forever), so every API replica hears every commit of every process. Reconnects when the
 * connection drops; `onConnected` then lets the caller catch up from the table, which is the truth.
 */
export function listenForPushedEvents(knex: Knex, options: ListenOptions): PushedEventsListener {
  const settings = (knex.client as { connectionSettings: string | pg.ClientConfig }).connectionSettings;
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (closed) return;
    const next = new pg.Client(typeof settings === 'string' ? { connectionString: settings } : settings);
    next.on('notification', (message) => {
      if (message.channel !== PUSHED_EVENTS_CHANNEL || !message.payload) return;
      try {
        options.onNotice(JSON.parse(message.payload) as PushedEventsNotice);
      } catch (error) {
        options.onError?.(error);
      }
    });
    const dropped = (error?: unknown) => {
      if (client !== next) return;
      client = undefined;
      if (error) options.onError?.(error);
      next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), options.reconnectDelayMs ?? 1_000);
    };
    next.on('error', dropped);
    next.on('end', () => dropped());
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${PUSHED_EVENTS_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      options.onConnected();
    } catch (error) {
      dropped(error);
    }
  };
  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const last = client;
      client = undefined;
      await last?.end().catch(() => undefined);
    },
  };
}
