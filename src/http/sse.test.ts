// The SSE writer: `event:` and `id:` lines when asked, and a comment line while a slow
// stream has nothing to send, so proxies and clients keep it open.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Metrics } from '../observability/metrics.ts';
import { openEventStream } from './sse.ts';

test('named events carry event and id lines; an idle stream gets keep-alive comments', async () => {
  const app = Fastify();
  app.decorate('metrics', new Metrics());
  let release!: () => void;
  const idle = new Promise<void>((r) => (release = r));
  app.get('/s', async (_req, reply) => {
    const sse = openEventStream(reply, { keepAliveMs: 10 });
    await sse.send({ type: 'response.created' }, 'response.created', '0');
    await sse.send('plain');
    await idle;
    await sse.send({ type: 'response.completed' }, 'response.completed');
    sse.end();
    return reply;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const { port } = app.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/s`);
    const reader = res.body!.getReader();
    let text = '';
    // Read until a keep-alive comment has arrived (it must, the handler is idle), then let it finish.
    while (!text.includes(': keep-alive')) text += new TextDecoder().decode((await reader.read()).value);
    release();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    const blocks = text.split('\n\n').filter(Boolean);
    assert.equal(blocks[0], 'event: response.created\nid: 0\ndata: {"type":"response.created"}');
    assert.equal(blocks[1], 'data: plain');
    assert.ok(blocks.slice(2, -1).every((b) => b === ': keep-alive'), JSON.stringify(blocks));
    assert.equal(blocks.at(-1), 'event: response.completed\ndata: {"type":"response.completed"}');
  } finally {
    await app.close();
  }
});

test('an event name or id with a line break is refused: it would add fields (or events) of its own to the stream', async () => {
  const app = Fastify();
  app.decorate('metrics', new Metrics());
  const refusals: string[] = [];
  app.get('/s', async (_req, reply) => {
    const sse = openEventStream(reply);
    for (const [event, id] of [
      ['response.created\ndata: {"injected":true}', undefined],
      ['a\rb', undefined],
      ['a\r\nb', undefined],
      ['ok', '1\nevent: injected'],
      ['ok', '1\r'],
    ] as const) {
      await sse.send({ type: 'x' }, event, id).then(
        () => undefined,
        (err: Error) => refusals.push(err.message),
      );
    }
    await sse.send({ type: 'fine' }, 'fine', '7');
    sse.end();
    return reply;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const { port } = app.server.address() as { port: number };
    const text = await (await fetch(`http://127.0.0.1:${port}/s`)).text();
    assert.equal(refusals.length, 5, JSON.stringify(refusals));
    assert.equal(text, 'event: fine\nid: 7\ndata: {"type":"fine"}\n\n', 'nothing of the refused events was written');
  } finally {
    await app.close();
  }
});
