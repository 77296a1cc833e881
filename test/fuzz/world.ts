// What the generators know after set-up: the operations, the keys, the ids each key
// can see, and how to build a valid request for an operation, which the hostile
// categories then break in one place.
import { FAKE_MODELS } from './fake-aggregator.ts';
import { minimalInstance, type JsonSchema, type Picker, type SchemaSet } from './json-schema.ts';
import type { Operation } from './operations.ts';
import type { RawRequest } from './raw-http.ts';
import { hostileText, type Hostile } from './values.ts';

/** Who sends: the full key A, the limited key B of another account, the admin token. */
export type Who = 'A' | 'B' | 'admin';

export interface IdPool {
  /** ids each caller can read (setup checked them with a GET) */
  A: string[];
  B: string[];
  /** ids the admin API created for the fuzz (never the accounts and keys A and B use) */
  admin: string[];
}

export interface World {
  v1: SchemaSet;
  admin: SchemaSet;
  messages: SchemaSet;
  gateway: SchemaSet;
  ops: Operation[];
  secrets: Record<Who, string>;
  /** the model ids GET /v1/models lists for A and for B */
  models: { A: string[]; B: string[] };
  /** the model ids GET /api/messages/v1/models lists for A and for B */
  messagesModels: { A: string[]; B: string[] };
  /**
   * The gateway root: the secret of a key of account B with the AI gateway switch (key B
   * has none), and the ids of requests key A and that key made through it (upstream
   * generation ids and request ids), each only the maker's to read at /generation.
   */
  gatewayB: string;
  generations: { A: string[]; B: string[] };
  /** path-param values by collection path (e.g. /v1/chat/completions) */
  ids: Map<string, IdPool>;
  /** operation id → the base request answered 2xx during set-up (param expectations need that) */
  baseOk: Map<string, boolean>;
  /** operation id → the query its base request carries (an id a lookup needs, such as the gateway's /generation?id=) */
  baseQuery: Map<string, string>;
  bodyLimit: number;
  seq: { n: number };
}

export const schemasOf = (world: World, op: Operation): SchemaSet => world[op.surface];
export const whoFor = (op: Operation): Who => (op.surface === 'admin' ? 'admin' : 'A');

/** Values for fields a schema alone cannot make valid. */
export function picker(world: World, op: Operation, who: Who): Picker {
  return (name: string, schema: JsonSchema) => {
    // The messages root takes any model name (a vendor's runs on the configured model): one of its own the key may use.
    if (name === 'model' && op.surface === 'messages') return world.messagesModels[who === 'B' ? 'B' : 'A'][0];
    if (name === 'model' && (schema.type === 'string' || schema.type === undefined) && !schema.enum) {
      // One the key may use, among those the field takes (x-models: embeddings take no chat model).
      const mine = world.models[who === 'B' ? 'B' : 'A'];
      const takes = Array.isArray(schema['x-models']) ? (schema['x-models'] as string[]) : undefined;
      return takes ? (takes.find((m) => mine.includes(m)) ?? takes[0]) : mine[0];
    }
    if (op.surface === 'admin' && name === 'name') return `fz-${world.seq.n++}`;
    // A file the caller uploaded in set-up (purpose batch, below), so creates that read a
    // file (batches) pass their base request and reach their deeper checks.
    if (op.surface === 'v1' && name.endsWith('file_id')) {
      const files = world.ids.get('/v1/files')?.[who === 'B' ? 'B' : 'A'];
      if (files?.length) return files[0];
    }
    if (name === 'purpose' && Array.isArray(schema.enum) && schema.enum.includes('batch')) return 'batch';
    if (name.endsWith('_id') && op.surface === 'admin') {
      const pool = world.ids.get(`/admin/v1/${name.slice(0, -3)}s`);
      if (pool?.admin.length) return pool.admin[0];
    }
    return undefined;
  };
}

/**
 * Fields an operation needs that its schema cannot require (one of several will do):
 * without them its base request is refused, and no case of it can be judged by field.
 */
const BASE_EXTRAS: Record<string, Record<string, unknown>> = {
  // input, previous_response_id or a conversation with items.
  createResponse: { input: 'hi' },
  // The schema's minimal message has empty content, and its minimal max_tokens (1) leaves no room for an answer.
  'messages:messages_post': { messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 },
  'messages:messages_count_tokens_post': { messages: [{ role: 'user', content: 'hi' }] },
  // The gateway's forwarded bodies have no schema (the upstream judges them): a request its fake upstream takes.
  gatewayChatCompletions: { model: FAKE_MODELS.chat, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 },
  gatewayCompletions: { model: FAKE_MODELS.chat, prompt: 'hi', max_tokens: 16 },
  gatewayEmbeddings: { model: FAKE_MODELS.embeddings, input: 'hi' },
  gatewaySpeech: { model: FAKE_MODELS.speech, input: 'hi', voice: 'alloy' },
  gatewayTranscriptions: { model: FAKE_MODELS.transcription, input_audio: { data: Buffer.from('RIFF fake wav').toString('base64'), format: 'wav' } },
  gatewayImages: { model: FAKE_MODELS.image, prompt: 'a lighthouse' },
  gatewayImagesOperation: { model: FAKE_MODELS.image, prompt: 'a lighthouse' },
};

export function baseBody(world: World, op: Operation, who: Who): Record<string, unknown> {
  if (!op.body) return {};
  const v = minimalInstance(schemasOf(world, op), op.body.schema, picker(world, op, who));
  const extras = op.surface === 'admin' ? undefined : BASE_EXTRAS[op.id];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? { ...(v as Record<string, unknown>), ...extras } : {};
}

/** A value for a path parameter the caller owns, or a plausible unknown one. */
function ownId(world: World, op: Operation, param: string, who: Who): string {
  const coll = op.path.slice(0, op.path.indexOf(`/{${param}}`));
  const pool = world.ids.get(coll);
  const list = pool ? pool[who] : [];
  return list[list.length - 1] ?? 'fz-unknown-id';
}

export function fillPath(op: Operation, values: Record<string, string>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, p: string) => values[p] ?? 'x');
}

export function ownPath(world: World, op: Operation, who: Who): string {
  return fillPath(op, Object.fromEntries(op.pathParams.map((p) => [p, encodeURIComponent(ownId(world, op, p, who))])));
}

/**
 * The key as a root takes it: `Authorization: Bearer`, or on the messages root, as its
 * clients send it, either that or `x-api-key`: chosen by a hash of the request, so a
 * case sends the same bytes every time it is built (its reproduction included).
 */
function authHeader(world: World, op: Operation, who: Who, target: string, body: Buffer | null): [string, string] {
  const secret = world.secrets[who];
  if (op.surface === 'messages' && fnv(target, body) % 2 === 1) return ['x-api-key', secret];
  return ['Authorization', `Bearer ${secret}`];
}

/** FNV-1a over the target and the first bytes of the body. */
function fnv(target: string, body: Buffer | null): number {
  let h = 0x811c9dc5;
  const mix = (b: number) => {
    h = Math.imul(h ^ b, 0x01000193) >>> 0;
  };
  for (let i = 0; i < target.length; i++) mix(target.charCodeAt(i) & 0xff);
  if (body) for (let i = 0; i < Math.min(body.length, 512); i++) mix(body[i]!);
  return h;
}

const AUTH_HEADERS = new Set(['authorization', 'x-api-key']);

/**
 * JSON with holes: a hole is a placeholder string, in key or value position, replaced by
 * raw bytes after JSON.stringify. That is how a body gets a duplicated key, a key
 * JSON.stringify would drop, 1e400, or bytes that are not UTF-8.
 */
export class Holes {
  private readonly raw: Buffer[] = [];
  value(h: Hostile): string {
    this.raw.push(hostileText(h));
    return `\u0000H${this.raw.length - 1}\u0000`;
  }
  /** A key written exactly as `text` (already JSON, quotes included; bytes as they are). */
  key(text: string | Buffer): string {
    this.raw.push(Buffer.isBuffer(text) ? text : Buffer.from(text));
    return `\u0000H${this.raw.length - 1}\u0000`;
  }
  build(value: unknown): Buffer {
    const text = JSON.stringify(value);
    const parts: Buffer[] = [];
    let last = 0;
    for (const m of text.matchAll(/"\\u0000H(\d+)\\u0000"/g)) {
      parts.push(Buffer.from(text.slice(last, m.index)), this.raw[Number(m[1])]!);
      last = m.index! + m[0].length;
    }
    parts.push(Buffer.from(text.slice(last)));
    return Buffer.concat(parts);
  }
}

/**
 * The request for `op` as `who`, with a JSON body (when given). `headers` replace the
 * defaults (a null value removes one; one naming Authorization or x-api-key replaces the
 * key however it was sent); `extraHeaders` are appended as they are, so a header can be
 * sent twice.
 */
export function request(
  world: World,
  op: Operation,
  who: Who,
  opts: { path?: string; query?: string; body?: Buffer | null; headers?: [string, string | null][]; extraHeaders?: [string, string][]; method?: string } = {},
): RawRequest {
  const query = opts.query ?? world.baseQuery.get(op.id);
  const target = (opts.path ?? ownPath(world, op, who)) + (query ? `?${query}` : '');
  const ownAuth = (opts.headers ?? []).some(([n]) => AUTH_HEADERS.has(n.toLowerCase()));
  let headers: [string, string][] = ownAuth ? [] : [authHeader(world, op, who, target, opts.body ?? null)];
  if (opts.body) headers.push(['Content-Type', 'application/json']);
  for (const [name, value] of opts.headers ?? []) {
    headers = headers.filter(([n]) => n.toLowerCase() !== name.toLowerCase());
    if (value !== null) headers.push([name, value]);
  }
  headers.push(...(opts.extraHeaders ?? []));
  return {
    method: opts.method ?? op.method,
    target,
    headers,
    body: opts.body ?? null,
  };
}

// --- multipart forms ---------------------------------------------------------------

/** One part of a multipart form: a text field, or a file (when `filename` is set). */
export interface FormPart {
  name: string;
  /** the part's bytes (text fields: UTF-8 of the value) */
  value: string | Buffer;
  filename?: string;
  /** extra part header lines, written as they are */
  headers?: string[];
}

/** Is this property of a multipart schema a file part? (OpenAPI: binary content.) */
export const isFileProperty = (schema: JsonSchema) => typeof schema.contentMediaType === 'string';

/** A valid form for `op`: the base body's fields as text parts, file properties as small files. */
export function baseForm(world: World, op: Operation, who: Who): FormPart[] {
  if (op.body?.media !== 'multipart') return [];
  const { properties } = schemasOf(world, op).objectShape(op.body.schema);
  const body = baseBody(world, op, who);
  const parts: FormPart[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (properties[name] && isFileProperty(properties[name]!)) parts.push({ name, value: Buffer.from('fuzz file\n'), filename: 'fz.txt' });
    else if (typeof value !== 'object' || value === null) parts.push({ name, value: String(value) });
  }
  return parts;
}

const BOUNDARY = 'fzformboundary7MA4YWxkTrZu0gW';

/** The form's bytes: each part with its Content-Disposition (a filename makes it a file). */
export function encodeForm(parts: readonly FormPart[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `Content-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    const headers = [disposition, ...(p.filename !== undefined ? ['Content-Type: application/octet-stream'] : []), ...(p.headers ?? [])];
    chunks.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`, 'utf8'), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value, 'utf8'), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** A request for `op` carrying a multipart form. */
export function formRequest(world: World, op: Operation, who: Who, parts: readonly FormPart[], opts: Parameters<typeof request>[3] = {}): RawRequest {
  return request(world, op, who, { ...opts, body: encodeForm(parts), headers: [['Content-Type', `multipart/form-data; boundary=${BOUNDARY}`], ...(opts.headers ?? [])] });
}

/** The operation's valid request: its JSON body, its form, or no body. */
export function baseRequest(world: World, op: Operation, who: Who, opts: Parameters<typeof request>[3] = {}): RawRequest {
  if (op.body?.media === 'multipart') return formRequest(world, op, who, baseForm(world, op, who), opts);
  return request(world, op, who, { body: op.body ? Buffer.from(JSON.stringify(baseBody(world, op, who))) : null, ...opts });
}
