// A zero-latency fake OpenAI-compatible upstream for the chat bench: POST
// /v1/chat/completions answers a fixed chat.completion (with usage), or with
// `stream: true` an SSE stream shaped like OpenAI's (role chunk, 10 content chunks, a
// finish chunk, a usage chunk when stream_options.include_usage, then [DONE]), written
// event by event without delays. GET / answers "ok" (health), GET /v1/models a list.
// Under /api/v1 it answers as an OpenRouter-shaped aggregator (the gateway bench): the
// same chat with a `gen-` id, `provider`, `X-Generation-Id` and `usage.cost`, a stream
// that always ends with a usage chunk carrying `cost`, and GET /api/v1/models with
// `pricing` in dollars per token (as strings) for the model it prices the cost at, and
// GET /api/v1/generation?id= with that cost (asked only for a call cut short).
//
//   PORT=18080 node bench/fake-upstream.mjs
import http from 'node:http';

const MODEL = 'fake-model';
const CREATED = 1767225600;
const WORDS = ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?', ' 🙂'];
const USAGE = { prompt_tokens: 12, completion_tokens: WORDS.length, total_tokens: 12 + WORDS.length };
let seq = 0;

// OpenRouter's shape (/api/v1): dollars per token, as its /models gives them.
const OR_MODEL = 'bench/fake-model';
const OR_PRICE = { prompt: '0.0000005', completion: '0.0000015' };
const OR_COST = Number((USAGE.prompt_tokens * Number(OR_PRICE.prompt) + USAGE.completion_tokens * Number(OR_PRICE.completion)).toFixed(12));
const OR_USAGE = { ...USAGE, cost: OR_COST, is_byok: false };
const orModels = JSON.stringify({
  data: [
    {
      id: OR_MODEL,
      canonical_slug: OR_MODEL,
      name: 'Bench: fake model',
      created: CREATED,
      context_length: 128000,
      pricing: { ...OR_PRICE, request: '0', image: '0' },
      top_provider: { context_length: 128000, max_completion_tokens: 4096, is_moderated: false },
    },
  ],
});

function orCompletion(id, model) {
  return JSON.stringify({
    id,
    provider: 'Fake',
    model,
    object: 'chat.completion',
    created: CREATED,
    choices: [{ logprobs: null, finish_reason: 'stop', native_finish_reason: 'stop', index: 0, message: { role: 'assistant', content: WORDS.join(''), refusal: null, reasoning: null } }],
    usage: OR_USAGE,
  });
}

function orStreamEvents(id, model) {
  const base = `{"id":"${id}","provider":"Fake","model":${JSON.stringify(model)},"object":"chat.completion.chunk","created":${CREATED},`;
  const chunk = (choices, usage) => `data: ${base}"choices":${choices}${usage ? `,"usage":${usage}` : ''}}\n\n`;
  const events = [chunk('[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]')];
  for (const w of WORDS) events.push(chunk(`[{"index":0,"delta":{"role":"assistant","content":${JSON.stringify(w)}},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]`));
  events.push(chunk('[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]'));
  // OpenRouter always ends a stream with the usage chunk (its cost included).
  events.push(chunk('[]', JSON.stringify(OR_USAGE)));
  events.push('data: [DONE]\n\n');
  return events;
}

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
  if (req.method === 'GET' && req.url === '/api/v1/models') return send(res, 200, 'application/json', orModels);
  if (req.method === 'GET' && req.url.startsWith('/api/v1/generation?')) {
    const id = new URL(req.url, 'http://fake').searchParams.get('id');
    const data = { id, model: OR_MODEL, created_at: new Date(CREATED * 1000).toISOString(), total_cost: OR_COST, tokens_prompt: USAGE.prompt_tokens, tokens_completion: USAGE.completion_tokens };
    return send(res, 200, 'application/json', JSON.stringify({ data }));
  }
  const aggregator = req.url === '/api/v1/chat/completions';
  if (req.method !== 'POST' || (req.url !== '/v1/chat/completions' && !aggregator)) {
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
    const model = typeof body.model === 'string' ? body.model : MODEL;
    if (aggregator) return answerAggregator(res, `gen-${Date.now()}-fake${(++seq).toString(36)}`, model, body.stream === true);
    const id = `chatcmpl-fake${(++seq).toString(36)}`;
    if (body.stream !== true) return send(res, 200, 'application/json', completion(id, model));
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const e of streamEvents(id, model, body.stream_options?.include_usage === true)) res.write(e);
    res.end();
  });
});
function answerAggregator(res, id, model, stream) {
  if (!stream) {
    const body = orCompletion(id, model);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-generation-id': id });
    return res.end(body);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-generation-id': id });
  for (const e of orStreamEvents(id, model)) res.write(e);
  res.end();
}

server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 18080), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 1000).unref();
});
