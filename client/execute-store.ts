/**
 * Where `executeTrade` keeps what it must not lose: the create's Idempotency-Key (kept before the
 * request is sent), the signed deposit request, each transaction's hash as soon as the wallet gives
 * it. `resumeTrade` reads it back after a crash. Three stores: in memory, a browser's localStorage,
 * and a JSON file for Node.
 */
import type { StorageLike, TradeRecord, TradeStore } from './execute-types.ts';

const copy = (record: TradeRecord): TradeRecord => JSON.parse(JSON.stringify(record)) as TradeRecord;

/** A store in this process's memory (lost with it): tests, or a caller that persists elsewhere. */
export function memoryTradeStore(): TradeStore {
  const records = new Map<string, TradeRecord>();
  return {
    get: async (key) => { const found = records.get(key); return found && copy(found); },
    put: async (record) => { records.set(record.key, copy(record)); },
    list: async () => [...records.values()].map(copy),
  };
}

/** A store in a browser's `localStorage` (or any Web Storage), one item per trade under `prefix`. */
export function localStorageTradeStore(
  storage: StorageLike = (globalThis as unknown as { localStorage: StorageLike }).localStorage, prefix = 'relayer-trade:',
): TradeStore {
  if (!storage) throw new Error('no localStorage here: pass a Storage, or use fileTradeStore in Node');
  return {
    get: async (key) => { const text = storage.getItem(prefix + key); return text === null ? undefined : JSON.parse(text) as TradeRecord; },
    put: async (record) => storage.setItem(prefix + record.key, JSON.stringify(record)),
    async list() {
      const records: TradeRecord[] = [];
      for (let index = 0; index < storage.length; index += 1) {
        const name = storage.key(index);
        if (name?.startsWith(prefix)) records.push(JSON.parse(storage.getItem(name)!) as TradeRecord);
      }
      return records;
    },
  };
}

/**
 * A store in one JSON file for Node: every write replaces the file through a temporary file and a
 * rename, so a crash leaves the old content or the new, never half of one. Writes are serialised.
 */
export function fileTradeStore(path: string): TradeStore {
  let queue: Promise<unknown> = Promise.resolve();
  const fs = () => import('node:fs/promises');
  const read = async (): Promise<Record<string, TradeRecord>> => {
    try {
      return JSON.parse(await (await fs()).readFile(path, 'utf8')) as Record<string, TradeRecord>;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') return {};
      throw error;
    }
  };
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    get: (key) => serial(async () => (await read())[key]),
    list: () => serial(async () => Object.values(await read())),
    put: (record) => serial(async () => {
      const { writeFile, rename } = await fs();
      const all = await read();
      all[record.key] = record;
      const temporary = `${path}.${record.key}.tmp`;
      await writeFile(temporary, JSON.stringify(all, null, 2));
      await rename(temporary, path);
    }),
  };
}
