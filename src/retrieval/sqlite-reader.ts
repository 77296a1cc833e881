// Read queries of the vector store search on a worker thread with its own read-only
// SQLite connection (sqlite-vec loaded): a KNN over a store's vectors or a bm25 ranking
// of many full-text matches takes milliseconds to tens of milliseconds of CPU, which on
// the server's connection would hold the event loop for every request in flight. WAL
// lets the reader see every committed write. An in-memory database cannot be shared
// with a thread: there the queries run on the server's connection.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Store } from '../store/db.ts';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
require(workerData.vec).load(db);
db.pragma('busy_timeout = 5000');
// The vectors are read whole by every KNN: map the file instead of copying pages through a small cache.
db.pragma('mmap_size = ' + workerData.mmapBytes);
db.pragma('cache_size = -65536');
const cache = new Map();
const prepare = (sql) => {
  let s = cache.get(sql);
  if (!s) {
    if (cache.size >= 200) cache.clear();
    s = db.prepare(sql);
    cache.set(sql, s);
  }
  return s;
};
parentPort.on('message', (m) => {
  if (m === 'stop') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id: m.id, rows: prepare(m.sql).all(...m.params) });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
});
`;

export interface SqliteReader {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Reader threads: a search's vector and full-text queries run side by side. */
const READERS = 2;

interface Reader {
  worker: Worker;
  pending: Map<number, { resolve: (rows: any[]) => void; reject: (err: Error) => void }>;
}

export function sqliteReader(store: Store, file: string | undefined): SqliteReader {
  if (!file || file === ':memory:') {
    return { all: <T>(sql: string, params: unknown[]) => store.sqliteSync!((conn) => conn.prepare(sql).all(...params) as T[]), close: async () => undefined };
  }
  const require = createRequire(import.meta.url);
  const workerData = { file, mmapBytes: 4 * 1024 * 1024 * 1024, driver: require.resolve('better-sqlite3'), vec: require.resolve('sqlite-vec') };
  const readers: (Reader | null)[] = Array.from({ length: READERS }, () => null);
  let next = 0;
  const start = (slot: number): Reader => {
    const reader: Reader = { worker: new Worker(WORKER, { eval: true, workerData }), pending: new Map() };
    const failAll = (err: Error) => {
      for (const w of reader.pending.values()) w.reject(err);
      reader.pending.clear();
      if (readers[slot] === reader) readers[slot] = null;
    };
    reader.worker.unref();
    reader.worker.on('message', (m: { id: number; rows?: unknown[]; error?: string }) => {
      const waiting = reader.pending.get(m.id);
      if (!waiting) return;
      reader.pending.delete(m.id);
      if (m.error !== undefined) waiting.reject(new Error(m.error));
      else waiting.resolve(m.rows!);
    });
    // A dead reader fails what it held; the next query starts a new one.
    reader.worker.on('error', (err) => failAll(err));
    reader.worker.on('exit', () => failAll(new Error('the search reader stopped')));
    return reader;
  };
  /** The reader with the fewest queries waiting (started on first use). */
  const pick = (): Reader => {
    let best = 0;
    for (let i = 0; i < READERS; i++) {
      const r = readers[i];
      if (!r) return (readers[i] = start(i));
      if (r.pending.size < readers[best]!.pending.size) best = i;
    }
    return readers[best]!;
  };
  return {
    all: <T>(sql: string, params: unknown[]) =>
      new Promise<T[]>((resolve, reject) => {
        const reader = pick();
        const id = next++;
        reader.pending.set(id, { resolve, reject });
        reader.worker.postMessage({ id, sql, params });
      }),
    close: async () => {
      const open = readers.filter((r): r is Reader => r !== null);
      readers.fill(null);
      await Promise.all(
        open.map(
          (r) =>
            new Promise<void>((resolve) => {
              r.worker.once('exit', () => resolve());
              r.worker.postMessage('stop');
              setTimeout(() => void r.worker.terminate(), 2_000).unref();
            }),
        ),
      );
    },
  };
}
