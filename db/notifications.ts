import type { Knex } from 'knex';
import pg from 'pg';

/** What one listener of a channel hears. */
export interface ChannelListener {
  /** A NOTIFY on the channel, from whichever process committed it (its payload, '' when none). */
  onNotification(payload: string): void;
  /**
   * The connection LISTENs on the channel, first or again after it dropped: notifications sent
   * while it was down are lost, so the listener reads what it may have missed from the tables.
   */
  onConnected(): void;
  /**
   * The connection dropped (or was closed): from now until the next `onConnected` nothing is heard,
   * so a listener that trusts what it holds only while notices arrive stops trusting it.
   */
  onDisconnected?(): void;
}

/** One process's LISTEN connection, shared by every channel it listens on. */
export interface Notifications {
  /** Listens on `channel` (connecting on first use); returns the stop. */
  listen(channel: string, listener: ChannelListener): () => void;
  /** Ends the connection; nothing is heard after. */
  close(): Promise<void>;
}

export interface NotificationsOptions {
  onError?(error: unknown): void;
  /** Wait before reconnecting after the connection dropped (default 1 s). */
  reconnectDelayMs?: number;
}

/** PostgreSQL channel names as written unquoted: what LISTEN takes without quoting. */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * One connection of its own (not one of the pool's, which would be held forever) that LISTENs on
 * every channel a part of the process asks for: one connection per process however many listen.
 * Reconnects when the connection drops and then tells every listener (`onConnected`), which reads
 * the table the channel is about: the table is the truth, a notification only says when to look.
 */
export function createNotifications(knex: Knex, options: NotificationsOptions = {}): Notifications {
  const settings = (knex.client as { connectionSettings: string | pg.ClientConfig }).connectionSettings;
  const channels = new Map<string, Set<ChannelListener>>();
  let client: pg.Client | undefined;
  let connected = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const tellConnected = (listeners: Iterable<ChannelListener>) => {
    for (const listener of listeners) {
      try {
        listener.onConnected();
      } catch (error) {
        options.onError?.(error);
      }
    }
  };

  const tellDisconnected = () => {
    for (const listeners of channels.values()) {
      for (const listener of listeners) {
        try {
          listener.onDisconnected?.();
        } catch (error) {
          options.onError?.(error);
        }
      }
    }
  };

  const connect = async () => {
    if (closed || client) return;
    const next = new pg.Client(typeof settings === 'string' ? { connectionString: settings } : settings);
    next.on('notification', (message) => {
      for (const listener of channels.get(message.channel) ?? []) {
        try {
          listener.onNotification(message.payload ?? '');
        } catch (error) {
          options.onError?.(error);
        }
      }
    });
    const dropped = (error?: unknown) => {
      if (client !== next) return;
      client = undefined;
      connected = false;
      tellDisconnected();
      if (error) options.onError?.(error);
      next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), options.reconnectDelayMs ?? 1_000);
    };
    next.on('error', dropped);
    next.on('end', () => dropped());
    client = next;
    try {
      await next.connect();
      // A Map's iteration also visits channels added while it awaits; none can be added between its
      // end and `connected` (no await there), so every channel is listened on before it is told.
      for (const channel of channels.keys()) await next.query(`LISTEN ${channel}`);
      if (closed) {
        await next.end();
        return;
      }
      connected = true;
      for (const listeners of channels.values()) tellConnected(listeners);
    } catch (error) {
      dropped(error);
    }
  };

  return {
    listen(channel, listener) {
      if (!CHANNEL_NAME.test(channel)) throw new RangeError(`channel must be a lower-case identifier, received '${channel}'`);
      if (closed) throw new Error('notifications are closed');
      let listeners = channels.get(channel);
      const fresh = !listeners;
      if (!listeners) channels.set(channel, (listeners = new Set()));
      listeners.add(listener);
      if (!client) void connect();
      else if (connected && fresh) {
        const on = client;
        on.query(`LISTEN ${channel}`).then(
          () => { if (client === on && connected) tellConnected([listener]); },
          (error: unknown) => options.onError?.(error),
        );
      } else if (connected) queueMicrotask(() => tellConnected([listener]));
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const last = client;
      client = undefined;
      connected = false;
      tellDisconnected();
      await last?.end().catch(() => undefined);
    },
  };
}
