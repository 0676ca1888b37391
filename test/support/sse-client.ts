/**
 * A minimal server-sent events reader over fetch, as a dApp would read a stream (it parses the
 * wire format itself, so the tests see exactly what the service writes): frames with `id`, `event`
 * and JSON `data`, and comment lines (heartbeats).
 */
export interface SseMessage {
  id: number;
  event: string;
  data: { type: string; timestamp: string; data: Record<string, any> };
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** Every message received so far, in order. */
  messages: SseMessage[];
  /** Comment lines received so far (`: heartbeat`). */
  comments: string[];
  /** Resolves when the server ends the stream (or it was aborted). */
  ended: Promise<void>;
  /** Resolves once `count` messages have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<SseMessage[]>;
  /** Drops the connection, as a client losing its network does. */
  abort(): void;
  /** The body of a refused (non-200) response, parsed. */
  body?: any;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const waiters: Array<() => void> = [];
  const connection: SseConnection = {
    status: response.status,
    headers: response.headers,
    messages,
    comments,
    ended: Promise.resolve(),
    async waitFor(count, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`waited for ${count} events, got ${messages.length}: ${messages.map((m) => m.event).join(', ')}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return messages.slice(0, count);
    },
    abort: () => controller.abort(),
  };
  if (response.status !== 200 || !response.body) {
    const text = await response.text();
    connection.body = text ? JSON.parse(text) : undefined;
    return connection;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  connection.ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields: Record<string, string> = {};
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
            }
          }
          if (fields.data !== undefined) {
            messages.push({ id: Number(fields.id), event: fields.event ?? 'message', data: JSON.parse(fields.data) });
            for (const wake of waiters.splice(0)) wake();
          }
        }
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
    }
  })();
  return connection;
}
