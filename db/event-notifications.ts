import type { Knex } from 'knex';
import { createNotifications, type Notifications } from './notifications.ts';
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
 * LISTENs on the outbox's channel over `notifications`, the process's shared LISTEN connection
 * (db/notifications.ts), so every API replica hears every commit of every process. Closing stops
 * this listener only; the connection is its owner's.
 */
export function hearPushedEvents(notifications: Notifications, options: Omit<ListenOptions, 'reconnectDelayMs'>): PushedEventsListener {
  const stop = notifications.listen(PUSHED_EVENTS_CHANNEL, {
    onNotification(payload) {
      if (!payload) return;
      try {
        options.onNotice(JSON.parse(payload) as PushedEventsNotice);
      } catch (error) {
        options.onError?.(error);
      }
    },
    onConnected: () => options.onConnected(),
  });
  return {
    async close() {
      stop();
    },
  };
}

/**
 * LISTENs on the outbox's channel on a connection of its own (not one of the pool's, which would
 * be held forever), so every API replica hears every commit of every process. Reconnects when the
 * connection drops; `onConnected` then lets the caller catch up from the table, which is the truth.
 */
export function listenForPushedEvents(knex: Knex, options: ListenOptions): PushedEventsListener {
  const notifications = createNotifications(knex, { onError: options.onError, reconnectDelayMs: options.reconnectDelayMs });
  const heard = hearPushedEvents(notifications, options);
  return {
    async close() {
      await heard.close();
      await notifications.close();
    },
  };
}
