// The sandbox's worker thread (sandbox.ts): parses one file at a time and answers with
// its raw text or the DocumentError it raised. Anything else that goes wrong ends the
// thread, which the sandbox reports.
import { parentPort } from 'node:worker_threads';
import { DocumentError } from './document-error.ts';
import { parseDocument, type ParseJob } from './parsers.ts';
import type { WorkerReply } from './sandbox.ts';

const port = parentPort;
if (!port) throw new Error('extract-worker.ts runs as a worker thread (see sandbox.ts)');

// pdf.js prints what it repairs in a damaged file; the server's log is not the place.
for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) console[method] = () => {};

port.on('message', (job: ParseJob) => {
  parseDocument(job).then(
    (text) => port.postMessage({ type: 'done', text } satisfies WorkerReply),
    (err: unknown) => {
      if (!(err instanceof DocumentError)) throw err;
      port.postMessage({ type: 'refused', code: err.code, message: err.message } satisfies WorkerReply);
    },
  );
});
port.postMessage({ type: 'ready' } satisfies WorkerReply);
