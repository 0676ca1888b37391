import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { hearPushedEvents, listenForPushedEvents, type ListenOptions, type PushedEventsListener } from '../../db/event-notifications.ts';
import type { Notifications } from '../../db/notifications.ts';
import {
  tradeEventsAfter, userEventsForSessions, type PushedEventsNotice, type StoredPushedEvent,
} from '../../db/repositories/pushed-events.ts';

/** Which stream: one trade's events, or everything about one user's ads and trades. */
export type StreamKey = { kind: 'trade'; id: string } | { kind: 'user'; id: string };

/** One open stream: how far it got, and where to write. */
export interface StreamSubscriber {
  /** The last position it has (its Last-Event-ID); advanced by the hub as it delivers. */
  lastSeq: number;
  /**
   * The session that opened it (a user stream): events are delivered only while that session is
   * live, read in the same snapshot as the events; once it is not, the hub calls `end` instead.
   */
  sessionId?: string;
  /** Receives committed events after `lastSeq`, in order, never twice. */
  deliver(events: StoredPushedEvent[]): void;
  /** The hub is shutting down, or the subscriber's session is over. */
  end(): void;
}

interface Channel {
  key: StreamKey;
  subscribers: Set<StreamSubscriber>;
  running: boolean;
  again: boolean;
}

const BATCH = 200;

/**
 * Fans committed outbox rows out to the streams open in this process. It keeps no events of its
 * own: a NOTIFY (from any process that committed) only says which trade and users have news, and
 * each stream's news is read from the outbox once for all its subscribers, from the lowest position
 * any of them holds. So a stream is complete whichever replica serves it, and a reconnect of the
 * LISTEN connection is followed by a read of every open stream.
 */
export class PushedEventHub {
  private readonly channels = new Map<string, Channel>();
  private listener: PushedEventsListener | undefined;
  private closed = false;

  /** `notifications`: the process's shared LISTEN connection (db/notifications.ts); without it the hub opens its own. */
  constructor(private readonly knex: Knex, private readonly logger: Logger, private readonly notifications?: Notifications) {}

  /** Open streams in this process. */
  get size(): number {
    let count = 0;
    for (const channel of this.channels.values()) count += channel.subscribers.size;
    return count;
  }

  /** Starts delivering `key`'s events after `subscriber.lastSeq`; returns the unsubscribe. */
  subscribe(key: StreamKey, subscriber: StreamSubscriber): () => void {
    if (this.closed) throw new Error('the event hub is closed');
    this.listen();
    const name = `${key.kind}:${key.id}`;
    let channel = this.channels.get(name);
    if (!channel) this.channels.set(name, (channel = { key, subscribers: new Set(), running: false, again: false }));
    channel.subscribers.add(subscriber);
    void this.pump(name);
    return () => {
      channel.subscribers.delete(subscriber);
      if (channel.subscribers.size === 0 && !channel.running) this.channels.delete(name);
    };
  }

  /** Ends every stream and stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    for (const channel of this.channels.values()) for (const subscriber of channel.subscribers) subscriber.end();
    this.channels.clear();
    await this.listener?.close();
  }

  private listen(): void {
    if (this.listener) return;
    const options: ListenOptions = {
      onNotice: (notice) => this.onNotice(notice),
      onConnected: () => {
        for (const name of this.channels.keys()) void this.pump(name);
      },
      onError: (error) => this.logger.warn({ err: error }, 'pushed events: LISTEN connection failed, reconnecting'),
    };
    this.listener = this.notifications ? hearPushedEvents(this.notifications, options) : listenForPushedEvents(this.knex, options);
  }

  private onNotice(notice: PushedEventsNotice): void {
    if (notice.tradeId && this.channels.has(`trade:${notice.tradeId}`)) void this.pump(`trade:${notice.tradeId}`);
    for (const userId of notice.userIds ?? []) if (this.channels.has(`user:${userId}`)) void this.pump(`user:${userId}`);
  }

  /** Reads the channel's news and hands each subscriber what it lacks; one read at a time per channel. */
  private async pump(name: string): Promise<void> {
    const channel = this.channels.get(name);
    if (!channel) return;
    if (channel.running) {
      channel.again = true;
      return;
    }
    channel.running = true;
    try {
      do {
        channel.again = false;
        for (;;) {
          if (channel.subscribers.size === 0) break;
          let from = Infinity;
          for (const subscriber of channel.subscribers) from = Math.min(from, subscriber.lastSeq);
          const { events, liveSessions } = await this.read(channel.key, from, channel.subscribers);
          for (const subscriber of [...channel.subscribers]) {
            if (liveSessions && events.length > 0 && subscriber.sessionId !== undefined && !liveSessions.has(subscriber.sessionId)) {
              // Revoked (logout) before these events committed: they are not its to see.
              channel.subscribers.delete(subscriber);
              subscriber.end();
              continue;
            }
            const fresh = events.filter((event) => event.seq > subscriber.lastSeq);
            if (fresh.length === 0) continue;
            subscriber.lastSeq = fresh[fresh.length - 1]!.seq;
            subscriber.deliver(fresh);
          }
          if (events.length < BATCH) break;
        }
      } while (channel.again && !this.closed);
    } catch (error) {
      this.logger.warn({ err: error, stream: name }, 'pushed events: reading the outbox failed, retrying');
      setTimeout(() => void this.pump(name), 1_000).unref();
    } finally {
      channel.running = false;
      if (channel.subscribers.size === 0 && this.channels.get(name) === channel) this.channels.delete(name);
    }
  }

  /** The stream's events after `afterSeq`; for a user stream, also which of its subscribers' sessions are live, in the same snapshot. */
  private async read(
    key: StreamKey,
    afterSeq: number,
    subscribers: Set<StreamSubscriber>,
  ): Promise<{ events: StoredPushedEvent[]; liveSessions?: Set<string> }> {
    if (key.kind === 'trade') return { events: await tradeEventsAfter(this.knex, key.id, afterSeq, BATCH) };
    const sessionIds = new Set<string>();
    for (const subscriber of subscribers) if (subscriber.sessionId !== undefined) sessionIds.add(subscriber.sessionId);
    return userEventsForSessions(this.knex, key.id, afterSeq, [...sessionIds], BATCH);
  }
}
