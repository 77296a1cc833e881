import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { DocumentError } from './document-error.ts';
import { Sandbox } from './sandbox.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);
const small = { format: 'xml', bytes: utf8('<a>fine</a>'), filename: 'a.xml' } as const;
/** About 20 MB of JSON that takes a second or so and a few hundred MB of heap to parse. */
const bigJson = () => ({ format: 'json', bytes: utf8(`[${Array.from({ length: 1_500_000 }, (_, i) => `{"k":${i}}`).join(',')}]`), filename: 'big.json' }) as const;

/** A one-page PDF whose content stream inflates to `mb` MB (1 MB of PDF per GB). */
function pdfBomb(mb: number): Uint8Array {
  const block = Buffer.alloc(1 << 20, 0x20);
  block.write('BT /F1 12 Tf 50 700 Td (bomb) Tj ET ', 0);
  const stream = zlib.deflateSync(Buffer.concat(Array.from({ length: mb }, () => block)), { level: 9 });
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  const size = () => parts.reduce((n, b) => n + b.length, 0);
  const add = (s: string | Buffer) => parts.push(typeof s === 'string' ? Buffer.from(s, 'latin1') : s);
  const obj = (n: number, body: string | Buffer[]) => {
    offsets[n] = size();
    if (typeof body === 'string') add(`${n} 0 obj ${body} endobj\n`);
    else for (const b of [Buffer.from(`${n} 0 obj `), ...body, Buffer.from(' endobj\n')]) add(b);
  };
  add('%PDF-1.4\n');
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  obj(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  obj(3, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>');
  obj(4, [Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >> stream\n`), stream, Buffer.from('\nendstream')]);
  obj(5, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const xref = size();
  const rows = [1, 2, 3, 4, 5].map((n) => `${String(offsets[n]).padStart(10, '0')} 00000 n \n`).join('');
  add(`xref\n0 6\n0000000000 65535 f \n${rows}trailer << /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

async function refusal(promise: Promise<unknown>): Promise<DocumentError> {
  const err = await promise.then(
    () => assert.fail('the file was read'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DocumentError, String(err));
  return err;
}

test('reads a file on a worker and keeps the worker for the next', async () => {
  const sandbox = new Sandbox();
  try {
    assert.equal(await sandbox.parse(small), 'fine\n');
    assert.equal(await sandbox.parse({ ...small, bytes: utf8('<b>again</b>') }), 'again\n');
  } finally {
    await sandbox.close();
  }
});

test('a file over the time limit is refused and its worker ended', async () => {
  const sandbox = new Sandbox({ timeoutMs: 1 });
  try {
    const err = await refusal(sandbox.parse(bigJson()));
    assert.equal(err.code, 'invalid_file');
    assert.match(err.message, /^The file 'big\.json' took longer than 1 ms to read/);
  } finally {
    await sandbox.close();
  }
});

test("a file that exhausts the worker's heap is refused; the process and the sandbox go on", async () => {
  const sandbox = new Sandbox({ heapMb: 32 });
  try {
    const err = await refusal(sandbox.parse(bigJson()));
    assert.equal(err.code, 'invalid_file');
    assert.match(err.message, /needs more than the 32 MB of memory/);
    assert.equal(await sandbox.parse(small), 'fine\n');
  } finally {
    await sandbox.close();
  }
});

test('a PDF stream that inflates past the memory budget is stopped (ArrayBuffers escape the heap limit)', async () => {
  const sandbox = new Sandbox({ memoryBudgetMb: 64 });
  try {
    const bomb = pdfBomb(256);
    assert.ok(bomb.length < 1024 * 1024, `${bomb.length} bytes`);
    const err = await refusal(sandbox.parse({ format: 'pdf', bytes: bomb, filename: 'bomb.pdf' }));
    assert.equal(err.code, 'invalid_file');
    assert.match(err.message, /needs more memory than a file may take to read \(the parser grew past 64 MB\)/);
    assert.equal(await sandbox.parse(small), 'fine\n');
  } finally {
    await sandbox.close();
  }
});

test('parses wait for a free worker; an aborted wait leaves the queue', async () => {
  const sandbox = new Sandbox({ maxWorkers: 1 });
  try {
    const first = sandbox.parse(bigJson());
    const controller = new AbortController();
    const queued = sandbox.parse(small, controller.signal);
    controller.abort(new Error('gave up'));
    await assert.rejects(queued, /gave up/);
    const others = Array.from({ length: 5 }, (_, i) => sandbox.parse({ ...small, bytes: utf8(`<n>${i}</n>`) }));
    assert.ok((await first).startsWith('k: 0\n'));
    assert.deepEqual(await Promise.all(others), ['0\n', '1\n', '2\n', '3\n', '4\n']);
  } finally {
    await sandbox.close();
  }
});

test('an abort during a parse ends it with the reason', async () => {
  const sandbox = new Sandbox();
  try {
    const controller = new AbortController();
    const pending = sandbox.parse(bigJson(), controller.signal);
    setTimeout(() => controller.abort(new Error('client gone')), 100);
    await assert.rejects(pending, /client gone/);
    assert.equal(await sandbox.parse(small), 'fine\n');
  } finally {
    await sandbox.close();
  }
});

test('closing ends the parses in progress and waiting, and refuses more', async () => {
  const sandbox = new Sandbox({ maxWorkers: 1 });
  const running = assert.rejects(sandbox.parse(bigJson()), DocumentError);
  const waiting = assert.rejects(sandbox.parse(small), /closed/);
  await new Promise((r) => setTimeout(r, 50));
  await sandbox.close();
  await Promise.all([running, waiting]);
  await assert.rejects(sandbox.parse(small), /closed/);
});
