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

export function sqliteReader(store: Store, file: string | undefined): SqliteReader {
  if (!file || file === ':memory:') {
    return { all: <T>(sql: string, params: unknown[]) => store.sqliteSync!((conn) => conn.prepare(sql).all(...params) as T[]), close: async () => undefined };
  }
  const require = createRequire(import.meta.url);
  let worker: Worker | null = null;
  let next = 0;
  const waiting = new Map<number, { resolve: (rows: any[]) => void; reject: (err: Error) => void }>();
  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
    worker = null;
  };
  const start = () => {
    const w = new Worker(WORKER, { eval: true, workerData: { file, mmapBytes: 4 * 1024 * 1024 * 1024, driver: require.resolve('better-sqlite3'), vec: require.resolve('sqlite-vec') } });
    w.unref();
    w.on('message', (m: { id: number; rows?: unknown[]; error?: string }) => {
      const pending = waiting.get(m.id);
      if (!pending) return;
      waiting.delete(m.id);
      if (m.error !== undefined) pending.reject(new Error(m.error));
      else pending.resolve(m.rows!);
    });
    // A dead reader fails what it held; the next query starts a new one.
    w.on('error', (err) => failAll(err));
    w.on('exit', () => failAll(new Error('the search reader stopped')));
    return w;
  };
  return {
    all: <T>(sql: string, params: unknown[]) =>
      new Promise<T[]>((resolve, reject) => {
        worker ??= start();
        const id = next++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id, sql, params });
      }),
    close: async () => {
      const w = worker;
      worker = null;
      if (!w) return;
      await new Promise<void>((resolve) => {
        w.once('exit', () => resolve());
        w.postMessage('stop');
        setTimeout(() => void w.terminate(), 2_000).unref();
      });
    },
  };
}
