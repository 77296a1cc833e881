// Issue 18 item 1: a client that goes away, at any point, never leaves its call
// unfinished. Hundreds of requests of every streaming kind (and non-streamed ones, and
// Responses WebSocket turns, and messages-surface answers) are cut off over raw sockets at random points: on a timer
// (before the first byte, during the pipeline's steps, mid-answer), after a random share
// of the answer's bytes, right as the last event arrives, and after the whole answer.
// Then every call must have been finished exactly once: the account's concurrency
// slots are all free again, no credit stays held, and each ledger entry has its one
// activity row carrying what the ledger charged. Also: pipelined requests on a socket
// that dies, and a handler that reaches its model run after its caller has gone.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { completionOnce, startCompletion, type CompletionBody } from '../api/completions/completion-call.ts';
import { createCompletion } from '../contract/endpoints/completions.ts';
import { estimateInputTokens, Run } from '../credits/run.ts';
import type { Lease } from '../limits/limits.ts';
import { admitCall } from '../pipeline/admit.ts';
import { newCall } from '../pipeline/call.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

/** Requests per kind (each cut off at a random point). */
const PER_KIND = Number(process.env.ABORT_PER_KIND ?? 120);
/** At once per account: under its concurrency limit, so refusals stay rare. */
const PARALLEL = 4;
const CONCURRENCY = 6;
const SEED = Number(process.env.ABORT_SEED ?? 18);
/** Output caps short enough to keep the run quick, long enough for dozens of events. */
const CAP = 16;
const ask = 'Tell me about the sea and the ships that sail on it, at length.';

const lateCompletion = { ...createCompletion, operationId: 'testLateCompletion', path: '/test/late-completion' } as const;
const lateRun = { ...createCompletion, operationId: 'testLateRun', path: '/test/late-run' } as const;
/** The late routes tell the test when their handler runs, and what opening a Run gave. */
let handlerReached: () => void = () => undefined;
let lateRunOutcome: Promise<unknown> = Promise.resolve();

let server: TestServer;
let port: number;

before(async () => {
  server = await startTestServer(
    { AGENT_API_ACCOUNT_CONCURRENCY: String(CONCURRENCY) },
    {
      routes: (router) => {
        // A handler whose caller goes away before it starts the model (the answer as a real route makes it).
        router.endpoint(lateCompletion, async ({ body, key, request, reply }) => {
          handlerReached();
          await once(reply.raw, 'close');
          return (await completionOnce(await startCompletion(router.services, request.state, body as CompletionBody, key))) ?? reply;
        });
        // A handler that opens a Run after its caller has gone, and would never close it.
        router.endpoint(lateRun, async ({ key, request, reply }) => {
          handlerReached();
          await once(reply.raw, 'close');
          lateRunOutcome = Run.open(router.services, request.state, { key, model: 'agent', input: estimateInputTokens('x', 0), maxOutputTokens: 16 }).then(
            () => 'opened',
            (err: unknown) => err,
          );
          await lateRunOutcome;
          return reply;
        });
      },
    },
  );
  port = Number(new URL(server.origin).port);
});
after(() => server.close());

/** mulberry32: a small seeded generator, so a failing run can be replayed (ABORT_SEED). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Req {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

/** Where a request is cut off. */
type Cut = { at: 'timer'; ms: number } | { at: 'bytes'; n: number } | { at: 'last' } | { at: 'end'; ms: number };

interface Outcome {
  /** X-Request-Id, when the response head arrived before the cut. */
  requestId: string | null;
  status: number | null;
  bytes: number;
  /** The whole answer arrived. */
  complete: boolean;
  ms: number;
}

const httpRequest = (key: string, req: Req) => {
  const body = req.body === undefined ? '' : JSON.stringify(req.body);
  return (
    `${req.method} ${req.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
    (req.body === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`) +
    `\r\n${body}`
  );
};

/**
 * Cuts one exchange off at `cut`: `start` begins it and `kill` destroys its socket; the
 * caller feeds `progress` what arrives. `last`: the answer's last event has arrived.
 */
function cutter(cut: Cut) {
  const outcome: Outcome = { requestId: null, status: null, bytes: 0, complete: false, ms: 0 };
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let kill = () => undefined as void;
  let killed = false;
  const cutNow = () => {
    clearTimeout(timer);
    if (!killed) (killed = true), kill();
  };
  return {
    outcome,
    started(killer: () => void) {
      kill = killer;
      if (cut.at !== 'timer') return;
      if (cut.ms === 0) cutNow();
      else timer = setTimeout(cutNow, cut.ms);
    },
    progress(bytes: number, last: boolean) {
      outcome.bytes += bytes;
      if (killed) return;
      if (cut.at === 'bytes' && outcome.bytes >= cut.n) cutNow();
      else if (cut.at === 'last' && last) cutNow();
      else if (outcome.complete) {
        if (cut.at === 'end') timer = setTimeout(cutNow, cut.ms);
        else cutNow();
      }
    },
    closed() {
      clearTimeout(timer);
      outcome.ms = performance.now() - started;
      return outcome;
    },
  };
}

/**
 * One HTTP request over a raw socket, destroyed at `cut`. `last` is a marker of the
 * answer's last event (null: the body's last byte).
 */
function cutRequest(key: string, req: Req, cut: Cut, last: string | null): Promise<Outcome> {
  return new Promise((resolve) => {
    const c = cutter(cut);
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let headEnd = -1;
    socket.on('connect', () => {
      socket.write(httpRequest(key, req));
      c.started(() => socket.destroy());
    });
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (headEnd < 0 && (headEnd = text.indexOf('\r\n\r\n')) >= 0) {
        const lines = text.slice(0, headEnd).split('\r\n');
        c.outcome.status = Number(lines[0]!.split(' ')[1]);
        for (const l of lines) if (/^x-request-id:/i.test(l)) c.outcome.requestId = l.slice(l.indexOf(':') + 1).trim();
      }
      if (headEnd >= 0) {
        const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd));
        c.outcome.complete = length ? text.length - headEnd - 4 >= Number(length[1]) : text.endsWith('\r\n0\r\n\r\n');
      }
      c.progress(d.length, last === null ? c.outcome.complete : text.includes(last));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(c.closed()));
  });
}

const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/** One Responses WebSocket turn, its socket destroyed at `cut`. */
function cutTurn(key: string, cut: Cut): Promise<Outcome> {
  return new Promise((resolve) => {
    const c = cutter(cut);
    const ws = new WebSocket(`${server.baseURL.replace('http', 'ws')}/responses`, { headers: { authorization: `Bearer ${key}` } });
    ws.on('open', () => {
      c.outcome.status = 101;
      ws.send(JSON.stringify({ type: 'response.create', model: 'agent', input: ask, max_output_tokens: CAP }));
      c.started(() => ws.terminate());
    });
    ws.on('message', (d: Buffer) => {
      const type = (JSON.parse(String(d)) as { type: string }).type;
      if (FINAL_EVENTS.has(type)) c.outcome.complete = true;
      c.progress(d.length, c.outcome.complete);
    });
    ws.on('unexpected-response', (_req, res) => {
      c.outcome.status = res.statusCode ?? null;
      ws.terminate();
    });
    ws.on('error', () => undefined);
    ws.on('close', () => resolve(c.closed()));
  });
}

interface Kind {
  name: string;
  send(key: string, cut: Cut): Promise<Outcome>;
}

function kinds(responseId: string): Kind[] {
  const http = (name: string, req: Req, last: string | null): Kind => ({ name, send: (key, cut) => cutRequest(key, req, cut, last) });
  const chat = (model: string, stream: boolean) => ({ model, stream, max_completion_tokens: CAP, messages: [{ role: 'user', content: ask }] });
  return [
    http('chat agent, streamed', { method: 'POST', path: '/v1/chat/completions', body: chat('agent', true) }, 'data: [DONE]'),
    http('chat agent-think, streamed', { method: 'POST', path: '/v1/chat/completions', body: { ...chat('agent-think', true), stream_options: { include_usage: true } } }, 'data: [DONE]'),
    http('text completion, streamed', { method: 'POST', path: '/v1/completions', body: { model: 'agent', stream: true, prompt: ask, max_tokens: CAP } }, 'data: [DONE]'),
    http('response, streamed', { method: 'POST', path: '/v1/responses', body: { model: 'agent', stream: true, input: ask, max_output_tokens: CAP } }, '"type":"response.completed"'),
    http('stored response, replayed', { method: 'GET', path: `/v1/responses/${responseId}?stream=true` }, '"type":"response.completed"'),
    http('chat agent-think, not streamed', { method: 'POST', path: '/v1/chat/completions', body: chat('agent-think', false) }, null),
    http('response, not streamed', { method: 'POST', path: '/v1/responses', body: { model: 'agent', input: ask, store: false, max_output_tokens: CAP } }, null),
    { name: 'response, WebSocket turn', send: cutTurn },
    http('message agent-think, streamed', { method: 'POST', path: '/api/messages/v1/messages', body: { model: 'agent-think', stream: true, max_tokens: CAP, messages: [{ role: 'user', content: ask }] } }, '"type":"message_stop"'),
    http('message, not streamed', { method: 'POST', path: '/api/messages/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: CAP, messages: [{ role: 'user', content: ask }] } }, null),
  ];
}
/** The index of the replay kind in kinds(). */
const REPLAY = 4;

/** Every request of a kind, PARALLEL at a time, each cut at a random point. */
async function cutMany(key: string, kind: Kind, random: () => number): Promise<{ outcomes: Outcome[]; full: Outcome }> {
  // One whole answer first: its size and time scale the random cuts.
  const full = await kind.send(key, { at: 'end', ms: 0 });
  assert.ok(full.complete && (full.status === 200 || full.status === 101), `${kind.name}: a whole answer`);
  const cuts: Cut[] = [];
  for (let i = 0; i < PER_KIND; i++) {
    const r = random();
    if (r < 0.3) cuts.push({ at: 'timer', ms: random() < 0.2 ? 0 : Math.floor(random() * full.ms * 1.2) });
    else if (r < 0.6) cuts.push({ at: 'bytes', n: 1 + Math.floor(random() * full.bytes) });
    else if (r < 0.85) cuts.push({ at: 'last' });
    else cuts.push({ at: 'end', ms: Math.floor(random() * 3) });
  }
  const outcomes: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < cuts.length) outcomes.push(await kind.send(key, cuts[next++]!));
    }),
  );
  return { outcomes, full };
}

interface Books {
  holds: number;
  slotsFree: boolean;
  rows: { request_id: string; credits_settled: number; status: number }[];
  entries: { request_id: string; charged: number }[];
}

async function books(accountId: string): Promise<Books> {
  const { db } = server.app.services.store;
  const holds = (await db.selectFrom('credit_holds').select('request_id').where('account_id', '=', accountId).execute()).length;
  const rows = await db.selectFrom('activity').select(['request_id', 'credits_settled', 'status']).where('account_id', '=', accountId).execute();
  const entries = await db.selectFrom('credit_reservations').select(['request_id', 'charged']).where('account_id', '=', accountId).execute();
  // The account can take all its slots at once again (the check gives them straight back).
  const { limits } = server.app.services;
  const taken: Lease[] = [];
  for (let lease; taken.length < CONCURRENCY && (lease = await limits.acquire('slot', accountId, CONCURRENCY)); ) taken.push(lease);
  for (const lease of taken) await limits.release(lease);
  return { holds, slotsFree: taken.length === CONCURRENCY, rows, entries };
}

/** The books balance: nothing held, every slot free, one row per ledger entry with its charge. */
function balanced(b: Books, seen: Set<string>): string | null {
  if (b.holds > 0) return `${b.holds} credit holds remain`;
  if (!b.slotsFree) return 'the account cannot take its concurrency slots: a call was never finished';
  const byId = new Map(b.rows.map((r) => [r.request_id, r]));
  if (byId.size !== b.rows.length) return 'an activity row is duplicated';
  for (const e of b.entries) {
    const row = byId.get(e.request_id);
    if (!row) return `the charged call ${e.request_id} has no activity row`;
    if (Number(row.credits_settled) !== Number(e.charged)) return `${e.request_id}: activity says ${row.credits_settled}, the ledger charged ${e.charged}`;
  }
  for (const id of seen) if (!byId.has(id)) return `the call ${id} (its response head arrived) has no activity row`;
  const logged = b.rows.reduce((s, r) => s + Number(r.credits_settled), 0);
  const charged = b.entries.reduce((s, e) => s + Number(e.charged), 0);
  if (logged !== charged) return `activity adds up to ${logged}, the ledger charged ${charged}`;
  return null;
}

/** Waits (generously: the finish steps run after the clients have gone) until every account balances. */
async function balance(accounts: { id: string; seen: Set<string> }[]): Promise<(string | null)[]> {
  const check = () => Promise.all(accounts.map(async (a) => balanced(await books(a.id), a.seen)));
  let problems = await check();
  for (const deadline = Date.now() + 45_000; problems.some((p) => p !== null) && Date.now() < deadline; problems = await check()) await pause(50);
  return problems;
}

async function newKey() {
  const account = await server.createAccount(1_000_000);
  const { key } = await server.createKey({ account_id: account.id });
  return { account, key };
}

// A loaded machine slows the run (about 25 s on an idle one), it must not fail it.
test('calls cut off at any point are each finished once: slots free, nothing held, activity equals the ledger', { timeout: 600_000 }, async (t) => {
  const t0 = performance.now();
  // One account per kind, all kinds at once: a leak is named by its kind.
  const accounts = await Promise.all(kinds('').map(() => newKey()));
  // The replayed response is one of the replaying account's own.
  const replayed = await server.openai(accounts[REPLAY]!.key).responses.create({ model: 'agent', input: ask, max_output_tokens: CAP });
  const results = await Promise.all(
    kinds(replayed.id).map(async (kind, i) => ({ kind, ...accounts[i]!, ...(await cutMany(accounts[i]!.key, kind, rng(SEED + i))) })),
  );
  const cutAt = performance.now();
  const problems = await balance(
    results.map((r) => ({ id: r.account.id, seen: new Set([r.full, ...r.outcomes].flatMap((o) => (o.requestId ? [o.requestId] : []))) })),
  );
  t.diagnostic(`cut ${results.length * PER_KIND} requests in ${Math.round(cutAt - t0)} ms; balanced after ${Math.round(performance.now() - cutAt)} ms more`);
  const report = results.map((r, i) => {
    const refused = r.outcomes.filter((o) => o.status === 429).length;
    const cutShort = r.outcomes.filter((o) => !o.complete).length;
    return `${r.kind.name}: ${problems[i] ?? 'balanced'} (whole answer ${r.full.bytes} bytes in ${Math.round(r.full.ms)} ms; ${r.outcomes.length} requests, ${cutShort} cut short, ${refused} refused 429)`;
  });
  for (const line of report) t.diagnostic(line);
  assert.ok(
    problems.every((p) => p === null),
    `seed ${SEED}:\n${report.join('\n')}`,
  );
  // And the accounts answer again, with every slot.
  for (const r of results) {
    const res = await Promise.all(Array.from({ length: CONCURRENCY }, () => server.fetch('/v1/models', { key: r.key })));
    assert.deepEqual(
      res.map((x) => x.status),
      Array(CONCURRENCY).fill(200),
    );
  }
});

test('pipelined requests on a socket that dies are each finished, the queued ones included', async () => {
  const { account, key } = await newKey();
  const stream = { method: 'POST', path: '/v1/chat/completions', body: { model: 'agent-think', stream: true, messages: [{ role: 'user', content: ask }] } } as const;
  const plain = { method: 'POST', path: '/v1/chat/completions', body: { model: 'agent', max_completion_tokens: CAP, messages: [{ role: 'user', content: ask }] } } as const;
  for (let i = 0; i < 20; i++) {
    // Three requests in one write: the second and third answers queue behind the stream.
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(httpRequest(key, stream) + httpRequest(key, plain) + httpRequest(key, { method: 'GET', path: '/v1/models' }));
    socket.on('error', () => undefined);
    await once(socket, 'data');
    await pause(i % 5);
    socket.destroy();
  }
  assert.deepEqual(await balance([{ id: account.id, seen: new Set() }]), [null]);
  // The GETs charge nothing, so the books balance without their rows: wait for them too.
  const count = async () => (await server.app.services.store.db.selectFrom('activity').select('endpoint').where('account_id', '=', account.id).execute()).length;
  let rows = await count();
  for (let i = 0; i < 200 && rows < 60; i++) rows = (await pause(25), await count());
  assert.equal(rows, 60, 'one row for each of the 60 requests');
});

/** Sends a request to a late route and goes away once its handler runs; the request id. */
async function leaveOnceHandled(key: string, path: string): Promise<string> {
  const reached = new Promise<void>((resolve) => (handlerReached = resolve));
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const clientId = `late-${Math.random()}`;
  socket.write(httpRequest(key, { method: 'POST', path, body: { model: 'agent', prompt: ask, max_tokens: CAP } }).replace('\r\n\r\n', `\r\nX-Client-Request-Id: ${clientId}\r\n\r\n`));
  await reached;
  socket.destroy();
  const { db } = server.app.services.store;
  for (let i = 0; i < 2000; i++) {
    const row = await db.selectFrom('activity').select('request_id').where('client_request_id', '=', clientId).executeTakeFirst();
    if (row) return row.request_id;
    await pause(10);
  }
  throw new Error('the request was never finished');
}

test('a handler that starts its model after its caller has gone runs nothing and charges nothing', async () => {
  const { account, key } = await newKey();
  const requestId = await leaveOnceHandled(key, '/v1/test/late-completion');
  assert.deepEqual(await balance([{ id: account.id, seen: new Set([requestId]) }]), [null]);
  const entry = await server.app.services.store.db.selectFrom('credit_reservations').select('charged').where('request_id', '=', requestId).executeTakeFirst();
  assert.equal(Number(entry?.charged ?? 0), 0, 'the model never ran for a caller already gone');
});

test('a Run opened after its call was finished gives its hold back at once', async () => {
  const { account, key } = await newKey();
  const requestId = await leaveOnceHandled(key, '/v1/test/late-run');
  const outcome = await lateRunOutcome;
  assert.notEqual(outcome, 'opened', 'no model runs for a finished call');
  assert.deepEqual(await balance([{ id: account.id, seen: new Set([requestId]) }]), [null]);
});

test('a slot taken after the call was finished goes straight back', async () => {
  const account = await server.createAccount(1);
  const { id } = await server.createKey({ account_id: account.id });
  const call = newCall({ id: 'req_late_slot', method: 'POST', route: null, routeLabel: 'test', ip: '127.0.0.1', log: server.app.http.log });
  call.key = (await server.app.services.keys.get(id))!;
  // The finish step has run (the caller went away) while the limits step was on its way.
  call.done = true;
  await admitCall(server.app.services, call);
  assert.equal(call.slot, null);
  assert.equal((await books(account.id)).slotsFree, true);
});
