// One forwarded gateway request: read the few fields a reservation needs (model, output
// cap, input size), moderate the input when the key says so, reserve, send the caller's
// bytes upstream with the upstream key, and pass the answer back as it arrives (status,
// headers, body bytes, a stream's comments and its error events), while a tee reads a
// copy for the usage. The call settles to the cost the upstream reported; when it
// reported none, to the model's price now, and to the upstream's /generation figure
// once it has one (late-cost.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { upstreamError } from '../../errors.ts';
import { drained } from '../../http/sse.ts';
import { Run, type InputEstimate } from '../../credits/run.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { callSignal } from '../../pipeline/call.ts';
import { LARGE_JSON_BYTES, parseJsonBody } from '../../pipeline/json/text.ts';
import { HOP_BY_HOP, type Aggregator, type ModelPrice } from '../../providers/aggregator/aggregator.ts';
import { outsideText } from '../../secrets.ts';
import type { Services } from '../../services.ts';
import { messageInput, moderateInput, type InputText } from '../moderations/moderate-input.ts';
import type { LateCosts } from './late-cost.ts';
import { UsageTee } from './usage-tee.ts';

export interface GatewayDeps {
  /** null: no upstream configured (forwarding answers 502 saying so). */
  aggregator: Aggregator | null;
  lateCosts: LateCosts;
}

/** The fields of a forwarded JSON body the gateway reads; the body itself goes on unchanged. */
interface Fields {
  model?: unknown;
  stream?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  messages?: unknown;
  prompt?: unknown;
  input?: unknown;
}

const NOT_CONFIGURED = 'No upstream aggregator is configured for the gateway: the operator sets GATEWAY_UPSTREAM_URL (and GATEWAY_UPSTREAM_KEY), see docs/gateway.md.';

/** An input bound that needs no counting: a forwarded call always settles to a usage it was given. */
class BodyBound implements InputEstimate {
  constructor(readonly bound: number) {}
  async counted(): Promise<number> {
    return this.bound;
  }
}

export async function forward(services: Services, deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply, key: KeyRecord): Promise<FastifyReply> {
  const { aggregator } = deps;
  if (!aggregator) throw upstreamError(NOT_CONFIGURED);
  const call = request.state;
  const signal = callSignal(call);
  const body = bodyBytes(request.body);
  const fields = body && isJson(request.headers['content-type']) ? await readFields(request, body, key.permissions.moderate) : {};
  if (typeof fields.model === 'string') call.model = fields.model.slice(0, 256);
  const contract = call.route!.contract!;
  if (key.permissions.moderate) await moderateInput(services, key, inputsOf(contract.path, fields), signal, call);

  let run: Run | null = null;
  let price: ModelPrice | null = null;
  if (contract.billable) {
    price = await aggregator.price(call.model, signal);
    const cap = outputCap(fields);
    run = price
      ? await Run.open(services, call, {
          key,
          input: new BodyBound(body?.length ?? 0),
          maxOutputTokens: cap ?? price.maxCompletionTokens ?? services.config.defaultMaxOutputTokens,
          price: { inputPerMTok: price.prompt * 1e6, outputPerMTok: price.completion * 1e6 },
        })
      : // No price for the model: the configured default is held (one "token" at that price).
        await Run.open(services, call, { key, input: new BodyBound(0), maxOutputTokens: 1, price: { inputPerMTok: 0, outputPerMTok: services.config.gateway.defaultReservationUsd * 1e6 } });
  }

  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await aggregator.send({ method: request.method, path: upstreamPath(request.url, call.route!.root!.prefix), headers: aggregator.upstreamHeaders(request.headers), ...(body ? { body } : {}), signal });
  } catch (err) {
    if (run) {
      run.report({ inputTokens: 0, outputTokens: 0 }, 0);
      await run.close();
    }
    if (signal.aborted) return reply;
    throw upstreamError(`The upstream aggregator did not answer: ${outsideText((err as Error).message, aggregator.scrubber, 300)}`);
  }

  const res = reply.raw;
  reply.hijack();
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  // Ours last: the request id and rate-limit headers the pipeline set.
  Object.assign(headers, reply.getHeaders() as Record<string, string | string[]>);
  res.writeHead(upstream.statusCode, headers);
  const tee = new UsageTee(headerText(upstream.headers['content-type']));
  const streamed = headerText(upstream.headers['content-type'])?.startsWith('text/event-stream') ?? false;
  let complete = false;
  // A whole answer (not a stream) keeps its latest chunk back until the next arrives, so
  // its last bytes go out after the settlement: a client that has the answer can see the
  // charge. A stream's events go out as they arrive (its end cannot be known in advance).
  let held: Buffer | null = null;
  try {
    for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
      tee.push(chunk);
      if (res.destroyed) break;
      const out = streamed ? chunk : held;
      if (!streamed) held = chunk;
      if (out && !res.write(out)) await drained(res);
    }
    tee.end();
    complete = true;
  } catch {
    // The upstream broke off mid-body, or the client went away (the signal aborted the request).
  } finally {
    if (!complete) upstream.body.destroy();
  }

  const generationId = headerText(upstream.headers['x-generation-id']) ?? tee.id;
  call.upstream = { id: generationId, streamed, finishReason: tee.finishReason ?? (tee.failed ? 'error' : null) };
  if (upstream.statusCode >= 400) call.errorCode = `upstream_${upstream.statusCode}`;
  if (run) {
    const charged = chargeFor(upstream.statusCode, tee, price, body?.length ?? 0, services.config.gateway.defaultReservationUsd, contract.path);
    run.report(charged.usage, charged.costUsd);
    await run.close().catch((err: unknown) => request.log.error({ err }, 'settling a gateway call failed'));
    // No cost from the upstream: its /generation is asked for a while (it knows it a few seconds later).
    if (!charged.reported && generationId && upstream.statusCode < 400) deps.lateCosts.watch(call.id, generationId);
  }
  // Settled before the answer ends, so a client that has the whole answer sees the charge.
  if (complete && !res.destroyed) res.end(held ?? undefined);
  else res.destroy();
  return reply;
}

/**
 * What one forwarded call is charged: the upstream's reported cost; else its usage at the
 * model's price; else (no usage: speech, a stream cut short) an estimate from the bytes
 * at that price, or the default reservation for an unpriced model. An upstream error
 * answer costs nothing. `reported`: the cost came from the upstream.
 */
function chargeFor(status: number, tee: UsageTee, price: ModelPrice | null, bodyBytes: number, defaultUsd: number, path: string) {
  const usage = tee.usage ? { inputTokens: tee.usage.promptTokens, outputTokens: tee.usage.completionTokens } : { inputTokens: 0, outputTokens: 0 };
  if (status >= 400) return { usage, costUsd: 0, reported: true };
  if (tee.usage?.cost != null) return { usage, costUsd: tee.usage.cost, reported: true };
  if (!price) return { usage, costUsd: defaultUsd, reported: false };
  if (!tee.usage) {
    // About four bytes a token; audio out is no text.
    usage.inputTokens = Math.ceil(bodyBytes / 4);
    usage.outputTokens = path === '/audio/speech' ? 0 : Math.ceil(tee.bytes / 4);
  }
  return { usage, costUsd: usage.inputTokens * price.prompt + usage.outputTokens * price.completion + price.request, reported: false };
}

function bodyBytes(body: unknown): Buffer | undefined {
  if (Buffer.isBuffer(body)) return body.length > 0 ? body : undefined;
  if (typeof body === 'string' && body !== '') return Buffer.from(body);
  return undefined;
}

const isJson = (type: string | undefined) => type !== undefined && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type);

const headerText = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The fields read for the reservation; the inputs, too, when they are moderated. */
const RESERVE_FIELDS = ['model', 'stream', 'max_tokens', 'max_completion_tokens'] as const;
const INPUT_FIELDS = ['messages', 'prompt', 'input'] as const;

/**
 * The JSON body's fields (a large one parsed on the worker pool, from a copy: the pool
 * takes the buffer it is given, which would leave nothing to forward; and only the
 * fields read come back from it); {} when it is not a JSON object: the upstream judges it.
 */
async function readFields(request: FastifyRequest, body: Buffer, moderated: boolean): Promise<Fields> {
  let value: unknown;
  try {
    value =
      body.length > LARGE_JSON_BYTES
        ? await request.server.jsonParsePool.parse(Buffer.from(body), null, () => request.raw.socket?.destroyed ?? true, undefined, moderated ? [...RESERVE_FIELDS, ...INPUT_FIELDS] : RESERVE_FIELDS)
        : parseJsonBody(body);
  } catch {
    return {};
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : {};
}

/** The output cap the caller asked for (`max_tokens`, else `max_completion_tokens`). */
function outputCap(fields: Fields): number | null {
  for (const v of [fields.max_tokens, fields.max_completion_tokens]) if (Number.isSafeInteger(v) && (v as number) > 0) return v as number;
  return null;
}

/** The request's inputs for the Moderate requests switch, per forwarded endpoint. */
function inputsOf(path: string, fields: Fields): InputText[] {
  const texts = (v: unknown, param: string): InputText[] =>
    typeof v === 'string' ? [{ text: v, param }] : Array.isArray(v) ? v.flatMap((t, i) => (typeof t === 'string' ? [{ text: t, param: `${param}[${i}]` }] : [])) : [];
  switch (path) {
    case '/chat/completions':
      return Array.isArray(fields.messages) ? fields.messages.map((m: any, i) => messageInput(m?.content, `messages[${i}].content`, new Map())) : [];
    case '/completions':
      return texts(fields.prompt, 'prompt');
    case '/embeddings':
    case '/audio/speech':
      return texts(fields.input, 'input');
    default:
      return [];
  }
}

/** The URL below the root, query included, as the caller sent it. */
export function upstreamPath(url: string, prefix: string): string {
  return url.slice(prefix.length) || '/';
}
