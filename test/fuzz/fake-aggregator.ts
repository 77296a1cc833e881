// A stand-in for the gateway root's upstream model aggregator (an outside service, so a
// fake is allowed), on a loopback port in the fuzzer's process, answering as OpenRouter's
// API does: a body that is not valid for it is a 4xx `{error: {code, message, metadata}}`
// (code = the status); a valid-looking chat, completion, embeddings, transcription or
// image request a 200 JSON with `usage` and its `cost` (chat and completions stream as
// SSE with a comment keep-alive, a usage chunk and [DONE] when asked); speech audio
// bytes; /models a list with pricing; /models/{author}/{slug}/endpoints its providers;
// /generation a 404 (the cost is never known late). It reads only the fields it checks,
// by hand, so a hostile body cannot touch the fuzzer's objects.
//
// What it sees of the gateway's requests is checked too: each must carry the upstream
// key and none of the callers' secrets (the caller's key never leaves the service).
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Models it serves, by endpoint, with their prices in dollars per token (strings, as the aggregator sends them). */
export const FAKE_MODELS = {
  chat: 'openai/gpt-4o-mini',
  embeddings: 'openai/text-embedding-3-small',
  speech: 'openai/gpt-4o-mini-tts',
  transcription: 'openai/whisper-1',
  image: 'google/gemini-2.5-flash-image',
} as const;

const MODELS = [
  { id: FAKE_MODELS.chat, prompt: '0.00000015', completion: '0.0000006', cap: 16_384, kind: 'chat' },
  { id: FAKE_MODELS.embeddings, prompt: '0.00000002', completion: '0', cap: null, kind: 'embeddings' },
  { id: FAKE_MODELS.speech, prompt: '0.0000006', completion: '0.000012', cap: 2_000, kind: 'speech' },
  { id: FAKE_MODELS.transcription, prompt: '0.0000025', completion: '0.00001', cap: 2_000, kind: 'transcription' },
  { id: FAKE_MODELS.image, prompt: '0.0000003', completion: '0.0000025', cap: 8_192, kind: 'image' },
] as const;
type Kind = (typeof MODELS)[number]['kind'];

/** The kind of model each forwarded path takes. */
const ROUTES: Record<string, Kind> = {
  '/chat/completions': 'chat',
  '/completions': 'chat',
  '/embeddings': 'embeddings',
  '/audio/speech': 'speech',
  '/audio/transcriptions': 'transcription',
  '/images': 'image',
  '/images/generations': 'image',
  '/images/edits': 'image',
};

const BODY_LIMIT = 8 * 1024 * 1024;

/** Request headers the gateway never forwards (docs/gateway.md): credentials, and the caller's connection and route. */
const NOT_FORWARDED = ['x-api-key', 'cookie', 'proxy-authorization', 'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'te', 'keep-alive', 'upgrade'];

class Refusal {
  constructor(
    readonly status: number,
    readonly message: string,
  ) {}
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Record<string, unknown>, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

export class FakeAggregator {
  /** What the gateway did wrong as the upstream saw it (a caller's secret forwarded, no upstream key). */
  readonly problems: string[] = [];
  /** Requests received, by path and status. */
  readonly counts = new Map<string, number>();
  /** SHA-256 (hex) of every request body received: the gateway must forward the caller's bytes unchanged. */
  readonly bodies = new Set<string>();
  private secrets: string[] = [];
  private seq = 0;

  private constructor(
    private readonly server: http.Server,
    readonly key: string,
  ) {}

  static async start(key: string): Promise<FakeAggregator> {
    let fake: FakeAggregator | undefined;
    const server = http.createServer((req, res) => fake!.handle(req, res));
    fake = new FakeAggregator(server, key);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The base URL the gateway is configured with (a path, as the aggregator's has). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v1`;
  }

  /** The callers' secrets: none may reach the upstream. */
  watchFor(secrets: readonly string[]): void {
    this.secrets = secrets.filter((s) => s.length >= 8);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= BODY_LIMIT) chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      let status = 500;
      if (size > 0 && size <= BODY_LIMIT) this.bodies.add(createHash('sha256').update(Buffer.concat(chunks)).digest('hex'));
      try {
        this.inspect(req);
        status = this.answer(req, size > BODY_LIMIT ? null : Buffer.concat(chunks), res);
      } catch (err) {
        const r = err instanceof Refusal ? err : new Refusal(400, `Invalid request: ${String(err).slice(0, 200)}`);
        status = r.status;
        this.json(res, r.status, { error: { code: r.status, message: r.message, metadata: { provider_name: null } } });
      }
      const path = (req.url ?? '').replace(/\?.*$/, '').replace(/^\/api\/v1/, '');
      const name = `${req.method} ${ROUTES[path] || path === '/models' || path === '/generation' ? path : '(other)'} ${status}`;
      this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    });
  }

  /**
   * The gateway's side of the request (docs/gateway.md "Forwarded endpoints"): the
   * upstream key, none of the callers' secrets, none of the headers about the caller's
   * connection and route, identity encoding (so the gateway can read the usage).
   */
  private inspect(req: http.IncomingMessage): void {
    const at = `${req.method} ${(req.url ?? '').slice(0, 120)}`;
    const problem = (what: string) => {
      if (this.problems.length < 100) this.problems.push(`${at}: ${what}`);
    };
    if (req.headers.authorization !== `Bearer ${this.key}`) problem('Authorization is not the upstream key');
    for (const name of NOT_FORWARDED) if (req.headers[name] !== undefined) problem(`the caller's ${name} header reached the upstream`);
    // The fuzzer names this one in its Connection header: hop-by-hop (RFC 9110 §7.6.1), for the gateway to drop.
    if (req.headers['x-fz-hop'] !== undefined) problem("a header the caller's Connection named (x-fz-hop) reached the upstream");
    if (req.headers['accept-encoding'] !== 'identity') problem(`Accept-Encoding ${JSON.stringify(req.headers['accept-encoding'])}, not identity`);
    const headers = req.rawHeaders.join('\n');
    for (const s of this.secrets) if (headers.includes(s)) problem("a caller's secret reached the upstream in a header");
  }

  /** Answers one request; returns its status. */
  private answer(req: http.IncomingMessage, body: Buffer | null, res: http.ServerResponse): number {
    const url = new URL(req.url ?? '/', 'http://upstream');
    if (!url.pathname.startsWith('/api/v1/')) throw new Refusal(404, 'Not Found');
    const path = url.pathname.slice('/api/v1'.length);
    const method = req.method ?? 'GET';
    if (path === '/models' || path === '/models/user') {
      if (method !== 'GET' && method !== 'HEAD') throw new Refusal(405, 'Method Not Allowed');
      return this.json(res, 200, { data: MODELS.map(modelEntry) });
    }
    const endpoints = /^\/models\/([^/]+)\/([^/]+)\/endpoints$/.exec(path);
    if (endpoints) {
      if (method !== 'GET' && method !== 'HEAD') throw new Refusal(405, 'Method Not Allowed');
      const id = `${safeDecode(endpoints[1]!)}/${safeDecode(endpoints[2]!)}`;
      const m = MODELS.find((x) => x.id === id);
      if (!m) throw new Refusal(404, `Model ${JSON.stringify(id.slice(0, 100))} not found`);
      return this.json(res, 200, { data: { id: m.id, name: m.id, architecture: { modality: 'text->text' }, endpoints: [{ provider_name: 'FakeProvider', context_length: m.cap ?? 8_192, pricing: { prompt: m.prompt, completion: m.completion }, status: 0 }] } });
    }
    if (path === '/generation') throw new Refusal(404, 'Generation not found');
    const kind = ROUTES[path];
    if (!kind) throw new Refusal(404, 'Not Found');
    if (method !== 'POST') throw new Refusal(405, 'Method Not Allowed');
    if (body === null) throw new Refusal(413, 'Request body too large');
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) throw new Refusal(400, 'Content-Type must be application/json');
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      throw new Refusal(400, 'The request body is not valid UTF-8');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Refusal(400, 'The request body is not valid JSON');
    }
    if (!isObject(parsed)) throw new Refusal(400, 'The request body must be a JSON object');
    const model = own(parsed, 'model');
    if (typeof model !== 'string') throw new Refusal(400, 'model: a string is required');
    const m = MODELS.find((x) => x.id === model);
    if (!m) throw new Refusal(400, `${model.slice(0, 100)} is not a valid model ID`);
    if (m.kind !== kind) throw new Refusal(400, `${model} does not support ${path}`);
    const maxTokens = own(parsed, 'max_tokens') ?? own(parsed, 'max_completion_tokens');
    if (maxTokens !== undefined && maxTokens !== null && !(Number.isSafeInteger(maxTokens) && (maxTokens as number) >= 1 && (m.cap === null || (maxTokens as number) <= m.cap))) {
      throw new Refusal(400, 'max_tokens: must be a positive integer within the model\'s output limit');
    }
    const stream = own(parsed, 'stream');
    if (stream !== undefined && stream !== null && typeof stream !== 'boolean') throw new Refusal(400, 'stream: must be a boolean');
    const inputChars = checkInput(path, parsed);
    const id = `gen-${Date.now()}-fz${(this.seq++).toString(36)}`;
    const promptTokens = Math.max(1, Math.ceil(inputChars / 4));
    const completionTokens = kind === 'chat' ? Math.min(8, (maxTokens as number | undefined) ?? 8) : 0;
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, cost: Number((promptTokens * Number(m.prompt) + completionTokens * Number(m.completion)).toFixed(12)) };
    res.setHeader('x-generation-id', id);
    switch (path) {
      case '/chat/completions':
      case '/completions': {
        const chat = path === '/chat/completions';
        const words = Array.from({ length: completionTokens }, (_, i) => `w${i} `);
        if (stream === true) return this.sse(res, id, model, chat, words, usage);
        const choice = chat ? { index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'length' } : { index: 0, text: words.join(''), finish_reason: 'length' };
        return this.json(res, 200, { id, object: chat ? 'chat.completion' : 'text_completion', created: Math.floor(Date.now() / 1000), model, provider: 'FakeProvider', choices: [choice], usage });
      }
      case '/embeddings':
        return this.json(res, 200, { id, object: 'list', model, data: [{ object: 'embedding', index: 0, embedding: [0.1, -0.2, 0.3, 0.05] }], usage });
      case '/audio/speech':
        // Audio bytes, no usage: the gateway settles on the price, then asks /generation (a 404 here).
        res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '64' });
        res.end(Buffer.alloc(64, 0xfb));
        return 200;
      case '/audio/transcriptions':
        return this.json(res, 200, { id, text: 'hello from the fake', usage });
      default:
        return this.json(res, 200, { id, created: Math.floor(Date.now() / 1000), model, data: [{ b64_json: Buffer.from('fake image').toString('base64') }], usage });
    }
  }

  private json(res: http.ServerResponse, status: number, body: unknown): number {
    if (res.headersSent) return status;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    res.end(text);
    return status;
  }

  private sse(res: http.ServerResponse, id: string, model: string, chat: boolean, words: string[], usage: Record<string, number>): number {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': OPENROUTER PROCESSING\n\n');
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: chat ? 'chat.completion.chunk' : 'text_completion', created: Math.floor(Date.now() / 1000), model, provider: 'FakeProvider', choices, ...extra })}\n\n`;
    for (const w of words) res.write(chunk([chat ? { index: 0, delta: { role: 'assistant', content: w }, finish_reason: null } : { index: 0, text: w, finish_reason: null }]));
    res.write(chunk([chat ? { index: 0, delta: {}, finish_reason: 'length' } : { index: 0, text: '', finish_reason: 'length' }]));
    res.write(chunk([], { usage }));
    res.end('data: [DONE]\n\n');
    return 200;
  }
}

function modelEntry(m: (typeof MODELS)[number]) {
  return {
    id: m.id,
    canonical_slug: m.id,
    name: m.id,
    created: 1_700_000_000,
    context_length: m.cap ?? 8_192,
    architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'] },
    pricing: { prompt: m.prompt, completion: m.completion, request: '0', image: '0' },
    top_provider: { context_length: m.cap ?? 8_192, max_completion_tokens: m.cap, is_moderated: false },
  };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new Refusal(400, 'Malformed path');
  }
}

/** The endpoint's input, checked as the aggregator would (the fields it needs, their types); returns its length in characters. */
function checkInput(path: string, body: Record<string, unknown>): number {
  const text = (v: unknown, name: string): number => {
    if (typeof v !== 'string') throw new Refusal(400, `${name}: a string is required`);
    return v.length;
  };
  switch (path) {
    case '/chat/completions': {
      const messages = own(body, 'messages');
      if (!Array.isArray(messages) || messages.length === 0) throw new Refusal(400, 'messages: a non-empty array is required');
      let n = 0;
      for (const [i, m] of messages.entries()) {
        if (!isObject(m)) throw new Refusal(400, `messages[${i}]: an object is required`);
        const role = own(m, 'role');
        if (typeof role !== 'string' || !['system', 'developer', 'user', 'assistant', 'tool'].includes(role)) throw new Refusal(400, `messages[${i}].role: invalid`);
        const content = own(m, 'content');
        if (typeof content === 'string') n += content.length;
        else if (Array.isArray(content)) {
          for (const [j, p] of content.entries()) {
            if (!isObject(p)) throw new Refusal(400, `messages[${i}].content[${j}]: an object is required`);
            if (own(p, 'type') === 'text') n += text(own(p, 'text'), `messages[${i}].content[${j}].text`);
            else if (own(p, 'type') === 'image_url' && isObject(own(p, 'image_url'))) n += text(own(own(p, 'image_url') as Record<string, unknown>, 'url'), `messages[${i}].content[${j}].image_url.url`);
            else throw new Refusal(400, `messages[${i}].content[${j}]: unsupported content part`);
          }
        } else if (!(content === null && role === 'assistant')) throw new Refusal(400, `messages[${i}].content: a string or an array of parts is required`);
      }
      return n;
    }
    case '/completions': {
      const prompt = own(body, 'prompt');
      if (Array.isArray(prompt) && prompt.length > 0) return prompt.reduce<number>((n, p, i) => n + text(p, `prompt[${i}]`), 0);
      return text(prompt, 'prompt');
    }
    case '/embeddings': {
      const input = own(body, 'input');
      if (Array.isArray(input) && input.length > 0) return input.reduce<number>((n, p, i) => n + text(p, `input[${i}]`), 0);
      if (typeof input === 'string' && input.length > 0) return input.length;
      throw new Refusal(400, 'input: a non-empty string or array of strings is required');
    }
    case '/audio/speech': {
      const n = text(own(body, 'input'), 'input');
      if (n === 0 || n > 4_096) throw new Refusal(400, 'input: 1 to 4096 characters');
      const voice = own(body, 'voice');
      if (voice !== undefined && typeof voice !== 'string') throw new Refusal(400, 'voice: a string is required');
      return n;
    }
    case '/audio/transcriptions': {
      const audio = own(body, 'input_audio');
      if (!isObject(audio)) throw new Refusal(400, 'input_audio: an object with data and format is required');
      const data = own(audio, 'data');
      if (typeof data !== 'string' || data.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) throw new Refusal(400, 'input_audio.data: base64 audio is required');
      text(own(audio, 'format'), 'input_audio.format');
      return Math.ceil(data.length / 100);
    }
    default:
      return text(own(body, 'prompt'), 'prompt');
  }
}
