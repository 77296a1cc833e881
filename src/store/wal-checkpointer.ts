// WAL checkpoints on a worker thread. In WAL mode SQLite copies the log back into the
// database file (and fsyncs both) every 1,000 pages, on whichever connection commits
// then: on the event loop, that is a pause of milliseconds every few hundred ledger
// writes, felt by every request in flight. A second connection on a worker thread
// checkpoints instead, every `intervalMs`, in PASSIVE mode (it never blocks a writer);
// the server's connection keeps a far higher auto-checkpoint threshold as a safety net
// should the worker fall behind or die.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  /** Runs a last checkpoint and stops the worker. */
  stop(): Promise<void>;
}

/** The server connection's auto-checkpoint threshold (pages) while the worker runs. */
export const SAFETY_NET_PAGES = 20_000;

export function startWalCheckpointer(file: string, intervalMs: number, onError: (message: string) => void): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { file, driver, intervalMs } });
  worker.unref();
  worker.on('message', (m: { error?: string }) => {
    if (m.error) onError(m.error);
  });
  worker.on('error', (err) => onError(err.message));
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        if (worker.threadId === -1) return resolve();
        worker.ref(); // keep the process up until the last checkpoint is done
        worker.once('exit', () => resolve());
        worker.postMessage('stop');
        // A worker stuck on a lock must not hold shutdown.
        setTimeout(() => void worker.terminate(), 2_000).unref();
      })),
  };
}
