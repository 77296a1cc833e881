// The offline transcription engine's parts: PocketSphinx's output read into segments
// (fillers dropped, pronunciation variants folded, pauses cutting segments), the program
// queue's bounds (a slot handed over, never exceeded; past the waiting bound a 503; a
// waiter whose caller left removed), and a program run without a shell, killed past its
// time limit or when its caller goes away.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../errors.ts';
import { parseOutput, pocketsphinxStatus } from './pocketsphinx.ts';
import { ProgramFailure, ProgramQueue, runProgram } from './programs.ts';

const OUTPUT = `please call stella
<s> 0.130 0.170 0.998201
please 0.180 0.550 0.997702
call 0.560 0.850 0.852043
[NOISE] 0.860 0.900 0.5
stella 0.910 1.400 0.073160
<sil> 1.410 1.500 0.879049
ask 1.510 1.820 0.592170
with(2) 1.830 2.000 0.480329
<sil> 2.010 2.600 0.9
her 2.610 2.800 0.786921
</s> 2.810 2.940 1.000000
the quick fox
<s> 4.000 4.100 0.999900
the 4.110 4.200 0.661763
quick 4.210 4.500 0.352671
fox 4.510 4.900 1.000000
</s> 4.910 5.000 1.000000
`;

test('output: utterances and long pauses cut segments; fillers dropped; variants folded', () => {
  const segments = parseOutput(OUTPUT);
  assert.deepEqual(
    segments.map((s) => s.words.map((w) => w.word).join(' ')),
    ['please call stella ask with', 'her', 'the quick fox'],
  );
  assert.equal(segments[0]!.start, 0.18);
  assert.equal(segments[0]!.end, 2);
  assert.equal(segments[2]!.words[1]!.confidence, 0.352671);
  for (const s of segments) for (const w of s.words) assert.ok(w.start >= s.start && w.end <= s.end);
  assert.deepEqual(parseOutput(''), []);
  assert.deepEqual(parseOutput('<s> 0.0 0.1 1\n</s> 0.1 0.2 1\n'), []);
});

test('a segment is cut at a word boundary past 30 s', () => {
  const lines = ['<s> 0.000 0.010 1'];
  for (let i = 0; i < 80; i++) lines.push(`word ${(i * 0.5 + 0.01).toFixed(3)} ${(i * 0.5 + 0.4).toFixed(3)} 0.9`);
  const segments = parseOutput(lines.join('\n'));
  assert.ok(segments.length >= 2);
  for (const s of segments) assert.ok(s.end - s.start <= 30);
});

test('status names what to install when the program or the model is missing', () => {
  const missing = pocketsphinxStatus('/nonexistent/pocketsphinx_continuous');
  assert.ok('missing' in missing && /apt-get install pocketsphinx pocketsphinx-en-us/.test(missing.missing));
  const noModel = pocketsphinxStatus('/bin/sh', '/nonexistent/model');
  assert.ok('missing' in noModel && /en-US model/.test(noModel.missing));
});

test('the queue never runs more than its limit, refuses past its waiting bound, and forgets a waiter whose caller left', async () => {
  const queue = new ProgramQueue(2, 2);
  let running = 0;
  let most = 0;
  const releases: (() => void)[] = [];
  const job = () =>
    new Promise<void>((resolve) => {
      running++;
      most = Math.max(most, running);
      releases.push(() => {
        running--;
        resolve();
      });
    });
  const signal = new AbortController().signal;
  const runs = [queue.run(signal, job), queue.run(signal, job), queue.run(signal, job)];
  const leaving = new AbortController();
  const left = queue.run(leaving.signal, job);
  await assert.rejects(queue.run(signal, job), (err: unknown) => err instanceof ApiError && err.status === 503);
  leaving.abort(new Error('gone'));
  await assert.rejects(left, /gone/);
  assert.deepEqual(queue.load, { running: 2, waiting: 1 });
  while (releases.length > 0 || running > 0) {
    releases.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(runs);
  assert.equal(most, 2);
  assert.deepEqual(queue.load, { running: 0, waiting: 0 });
});

test('programs run with an argument array (no shell), time-limited, and stop when the caller leaves', async () => {
  const signal = new AbortController().signal;
  const echoed = await runProgram('/bin/echo', ['$(id)', '; rm -rf /'], { timeoutMs: 10_000, signal });
  assert.equal(echoed.stdout, '$(id) ; rm -rf /\n');
  await assert.rejects(runProgram('/bin/sleep', ['30'], { timeoutMs: 200, signal }), (err: unknown) => err instanceof ProgramFailure && err.kind === 'timeout');
  await assert.rejects(runProgram('/nonexistent/program', [], { timeoutMs: 1000, signal }), (err: unknown) => err instanceof ProgramFailure && err.kind === 'missing');
  await assert.rejects(runProgram('/bin/sh', ['-c', 'exit 3'], { timeoutMs: 1000, signal }), (err: unknown) => err instanceof ProgramFailure && err.kind === 'exit');
  const leaving = new AbortController();
  const pending = runProgram('/bin/sleep', ['30'], { timeoutMs: 60_000, signal: leaving.signal });
  setTimeout(() => leaving.abort(new Error('caller gone')), 50);
  await assert.rejects(pending, /caller gone/);
});
