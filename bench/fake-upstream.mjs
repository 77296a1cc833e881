// A zero-latency fake OpenAI-compatible upstream for the chat bench: POST
// /v1/chat/completions answers a fixed chat.completion (with usage), or with
// `stream: true` an SSE stream shaped like OpenAI's (role chunk, 10 content chunks, a
// finish chunk, a usage chunk when stream_options.include_usage, then [DONE]), written
// event by event without delays. GET / answers "ok" (health), GET /v1/models a list.
//
//   PORT=18080 node bench/fake-upstream.mjs
import http from 'node:http';

const MODEL = 'fake-model';
const CREATED = 1767225600;
const WORDS = ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?', ' 🙂'];
const USAGE = { prompt_tokens: 12, completion_tokens: WORDS.length, total_tokens: 12 + WORDS.length };
let seq = 0;

function completion(id, model) {
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created: CREATED,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join(''), refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: USAGE,
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  });
}

function streamEvents(id, model, includeUsage) {
  const base = `{"id":"${id}","object":"chat.completion.chunk","created":${CREATED},"model":${JSON.stringify(model)},"service_tier":"default","system_fingerprint":"fp_fake",`;
  const chunk = (choices, usage = 'null') => `data: ${base}"choices":${choices},"usage":${usage}}\n\n`;
  const events = [chunk('[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]')];
  for (const w of WORDS) events.push(chunk(`[{"index":0,"delta":{"content":${JSON.stringify(w)}},"logprobs":null,"finish_reason":null}]`));
  events.push(chunk('[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]'));
  if (includeUsage) events.push(chunk('[]', JSON.stringify(USAGE)));
  events.push('data: [DONE]\n\n');
  return events;
}

const models = JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model', created: CREATED, owned_by: 'fake' }] });

function send(res, status, type, body) {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/') return send(res, 200, 'text/plain', 'ok');
  if (req.method === 'GET' && req.url === '/v1/models') return send(res, 200, 'application/json', models);
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    return send(res, 404, 'application/json', JSON.stringify({ error: { message: `No route ${req.method} ${req.url}`, type: 'invalid_request_error' } }));
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, 'application/json', JSON.stringify({ error: { message: 'invalid JSON body', type: 'invalid_request_error' } }));
    }
    const id = `chatcmpl-fake${(++seq).toString(36)}`;
    const model = typeof body.model === 'string' ? body.model : MODEL;
    if (body.stream !== true) return send(res, 200, 'application/json', completion(id, model));
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const e of streamEvents(id, model, body.stream_options?.include_usage === true)) res.write(e);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 18080), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 1000).unref();
});
