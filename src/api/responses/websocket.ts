// The Responses WebSocket (SPEC "Events" item 3): GET /v1/responses with Upgrade:
// websocket. The key is checked at the upgrade (a refusal is the usual JSON error before
// any 101); each `response.create` message is a call of its own through the pipeline a
// POST takes (the contract, the key's limits and the account's slot, a Run, an activity
// row) and gets the same events as the SSE stream, one JSON message each. One response
// at a time per socket; `background` and any other message type are refused with
// `{type: "error", status, error}` and the socket stays open. `store: false` responses
// can be continued by id within the session that made them (kept in memory, bounded).
// Each message is a call of the call runner (pipeline/runner.ts): read by the one JSON
// parser a POST body takes (pipeline/json/text.ts), so it is refused exactly as that
// body would be, and refused ones too get a request id (`error.headers`), an access
// line and an activity row.
import type { WebsocketPluginOptions } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { createResponse } from '../../contract/endpoints/responses.ts';
import { ApiError, insufficientQuota, invalidRequest, methodNotAllowed, serverError } from '../../errors.ts';
import { presentedSecret } from '../../http/authenticate.ts';
import type { JsonParsePool } from '../../pipeline/json/parse-pool.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { authenticateCall } from '../../pipeline/authenticate.ts';
import { newCall, type Call, type RouteConfig } from '../../pipeline/call.ts';
import { jsonText, runCall, type CallSource } from '../../pipeline/runner.ts';
import { providerFailure } from '../stream-answer.ts';
import type { Services } from '../../services.ts';
import type { Item } from './items.ts';
import type { StreamEvent } from './output-builder.ts';
import { openBuilder, startResponse, type ResponseBody, type ResponsesDeps } from './response-call.ts';
import { failureEvents, finalEvents, openingEvents, sequencer } from './response-stream.ts';
import type { StoredResponses } from './stored-responses.ts';

/** SPEC: up to 8 sockets per account at once. */
export const SOCKETS_PER_ACCOUNT = 8;
/** Unstored responses a session keeps for continuation (the oldest are forgotten first). */
const SESSION_RESPONSES = 32;

const route: RouteConfig = { auth: 'key', contract: createResponse, endpoint: '/v1/responses' };

/**
 * Messages up to this many times the body limit are read and refused by our parser (an
 * error event, the socket stays open); `ws` stops reading a larger one (its maxPayload):
 * the error event, then a close with 1009, since the rest of it cannot be skipped.
 */
const READ_LIMIT_FACTOR = 2;

/** Errors `ws` raises for what the client sent; it closes the socket with the matching code itself. */
const isClientFrameError = (err: unknown) => typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('WS_ERR_');
const TOO_LARGE = new Set(['WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', 'WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH']);
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/** How @fastify/websocket is registered: the server options and what is done with a socket's errors. */
export function websocketPluginOptions(bodyLimitBytes: number): WebsocketPluginOptions {
  return {
    options: {
      maxPayload: Math.min(2 ** 31 - 1, bodyLimitBytes * READ_LIMIT_FACTOR),
      // Text frames reach our parser as bytes, so invalid UTF-8 is its 400 error event
      // (naming the field) instead of a 1007 close by ws.
      skipUTF8Validation: true,
    },
    // The client's mistakes (a frame ws cannot read, a socket reset) are logged at info
    // without a stack; ws closes the socket with its code, so it is not cut short here
    // (the error event sent just before must get out). Anything else is ours.
    errorHandler(err, socket, request) {
      const code = (err as { code?: string }).code;
      if (isClientFrameError(err)) return void request.log.info({ code, reason: err.message }, 'websocket closed: the client sent what it may not');
      if (code && CLIENT_GONE.has(code)) request.log.info({ code }, 'websocket connection lost');
      else request.log.error({ err }, 'websocket failed');
      socket.terminate();
    },
  };
}

/**
 * The body of a `response.create` message (`stream` dropped: every turn streams), or the
 * refusal a POST of it would get. A large message is parsed on the app's worker pool,
 * as a large POST body is, so it never holds the event loop.
 */
async function createBody(data: Buffer, isBinary: boolean, bodyLimitBytes: number, pool: JsonParsePool, gone: () => boolean): Promise<Record<string, unknown>> {
  if (isBinary) throw invalidRequest('Send each message as a text frame holding one JSON object, e.g. {"type": "response.create", ...}.');
  const parsed = await jsonText(data, { limit: bodyLimitBytes, noun: 'message', pool, gone });
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidRequest('Each message is one JSON object, e.g. {"type": "response.create", ...}.');
  const { type, stream: _stream, ...body } = parsed as Record<string, unknown>;
  if (type !== 'response.create') {
    const shown = typeof type === 'string' ? `'${type.slice(0, 64)}'` : type === undefined ? 'missing' : `a ${Array.isArray(type) ? 'list' : type === null ? 'null' : typeof type}`;
    throw invalidRequest(`The message type ${shown} is not offered here: send response.create.`, 'type');
  }
  if (body.background === true) throw invalidRequest('background is not offered on the WebSocket: use POST /v1/responses.', 'background');
  return body;
}

interface SessionResponse {
  inputItems: Item[];
  output: Item[];
  previousResponseId: string | null;
}

/**
 * The stored chain, with this session's unstored responses in front: a chain may start
 * in memory and continue in the database.
 */
function sessionStore(stored: StoredResponses, session: Map<string, SessionResponse>): StoredResponses {
  const chain: StoredResponses['chain'] = async (accountId, id) => {
    const items: Item[][] = [];
    let next: string | null = id;
    while (next !== null && session.has(next)) {
      const r: SessionResponse = session.get(next)!;
      items.unshift([...r.inputItems, ...r.output]);
      next = r.previousResponseId;
    }
    if (next === null) return { items: items.flat(), conversationId: null };
    const rest = await stored.chain(accountId, next);
    if (!rest) return items.length ? { items: items.flat(), conversationId: null } : undefined;
    return { items: [...rest.items, ...items.flat()], conversationId: rest.conversationId };
  };
  return Object.assign(Object.create(stored) as StoredResponses, { chain });
}

export function responsesWebSocket(app: FastifyInstance, services: Services, deps: ResponsesDeps): void {
  const sessionMs = services.config.wsSessionMs;
  const bodyLimitBytes = services.config.bodyLimitBytes;

  app.route({
    method: 'GET',
    url: '/v1/responses',
    config: { agent: { auth: 'none', endpoint: '/v1/responses' } satisfies RouteConfig },
    // The key at the upgrade, with the same refusals as a POST; a GET without an upgrade is 405.
    preHandler: async (request: FastifyRequest) => {
      if (!(request as { ws?: boolean }).ws) throw methodNotAllowed('GET /v1/responses opens a WebSocket (send Upgrade: websocket); create a response with POST.', 'POST');
      const session = newCall({ id: request.state.id, method: 'GET', route, routeLabel: 'websocket /v1/responses', ip: request.ip, log: request.log });
      await authenticateCall(services, session, presentedSecret(request));
      // A lease of the account's sockets (shared by every instance on Redis), held until
      // the connection closes however it ends: upgraded or not, by either side.
      const lease = await services.limits.acquire('socket', session.key!.accountId, SOCKETS_PER_ACCOUNT);
      if (!lease) throw insufficientQuota(`This account already has ${SOCKETS_PER_ACCOUNT} open Responses WebSockets.`);
      const connection = request.raw.socket;
      if (connection.destroyed) void services.limits.release(lease);
      else connection.once('close', () => void services.limits.release(lease));
      (request as { sessionKey?: KeyRecord }).sessionKey = session.key!;
    },
    handler: async () => {
      throw methodNotAllowed('GET /v1/responses opens a WebSocket (send Upgrade: websocket); create a response with POST.', 'POST');
    },
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      const key = (request as { sessionKey?: KeyRecord }).sessionKey!;
      const unstored = new Map<string, SessionResponse>();
      const sessionDeps: ResponsesDeps = { ...deps, stored: sessionStore(deps.stored, unstored) };
      // The turn now running: aborted when the socket closes.
      let running: AbortController | null = null;
      const expire = setTimeout(() => socket.close(1000, 'session expired after its maximum duration'), sessionMs).unref();
      socket.on('close', () => {
        clearTimeout(expire);
        running?.abort();
      });

      const send = (event: unknown) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
      };
      // The reference's error event; `error.headers` carries the request id (and any header the error has, e.g. Retry-After).
      const sendError = (requestId: string, error: ApiError) =>
        send({ type: 'error', status: error.status, error: { ...error.toBody().error, headers: { ...error.headers, 'x-request-id': requestId } } });
      const source = (key: KeyRecord, body: () => unknown, signal?: AbortSignal, refuse?: ApiError): CallSource => ({ route, routeLabel: 'websocket /v1/responses', ip: request.ip, log: request.log, key, body, signal, refuse });
      /**
       * A message refused before it could run: a call of its own all the same (request id,
       * access line, activity row). Its event goes out at once: ws closes the socket right
       * after a message too large.
       */
      const refuse = (error: ApiError) => {
        const id = newId('req_');
        sendError(id, error);
        void runCall(services, { ...source(key, () => undefined, undefined, error), id }, async () => undefined);
      };

      // A message too large for ws to read: the error event goes out before ws closes with 1009.
      (socket as unknown as { _receiver?: NodeJS.EventEmitter })._receiver?.prependListener('error', (err: unknown) => {
        if (TOO_LARGE.has((err as { code?: string }).code ?? '')) {
          refuse(invalidRequest(`The message is larger than the limit of ${bodyLimitBytes} bytes; one over ${bodyLimitBytes * READ_LIMIT_FACTOR} bytes is not read: the socket is closed.`));
        }
      });

      socket.on('message', (data: Buffer, isBinary: boolean) => {
        if (running) return refuse(invalidRequest('A response is already running on this socket: wait for its last event.'));
        const turn = (running = new AbortController());
        void (async () => {
          // The key as it is now, then the message, in a POST's order.
          const current = (await services.keys.get(key.id)) ?? key;
          const body = () => createBody(data, isBinary, bodyLimitBytes, app.jsonParsePool, () => socket.readyState !== socket.OPEN);
          const outcome = await runCall(services, source(current, body, turn.signal), (call) => stream(call, () => {
            // Free for the next message once the last event is out, before the finish step's wait.
            if (running === turn) running = null;
          }), (status) => status);
          if (running === turn) running = null;
          if (outcome.error) sendError(outcome.call.id, outcome.error);
        })().catch((err: unknown) => {
          // Only the key's re-read can get here (runCall answers every failure).
          if (running === turn) running = null;
          request.log.error({ err }, 'websocket turn failed');
          sendError(newId('req_'), serverError());
        });
      });

      /** The turn's events, one message each; the status the caller got (a failure after the first event is an event, not a throw). */
      async function stream(call: Call, last: () => void): Promise<number> {
        const started = await startResponse(services, sessionDeps, call, call.body as ResponseBody, call.key!);
        const { builder, events: premade } = openBuilder(started);
        const seq = sequencer();
        const emit = (events: StreamEvent[]) => events.forEach((e) => send(seq(e)));
        try {
          emit(openingEvents(started));
          emit(premade);
          for await (const part of started.events) emit(builder.add(part));
          const { credits, usage } = await started.run.close();
          const events = await finalEvents(started, builder, credits, usage);
          const response = events.at(-1)!.response as Record<string, any>;
          if (response.store === false) {
            unstored.set(response.id, { inputItems: started.inputItems, output: builder.output, previousResponseId: response.previous_response_id });
            if (unstored.size > SESSION_RESPONSES) unstored.delete(unstored.keys().next().value!);
          }
          last();
          emit(events);
          return 200;
        } catch (err) {
          await started.run.close().catch(() => undefined);
          let failure: ApiError | null;
          try {
            failure = providerFailure(err, started.run.signal);
          } catch {
            call.log.error({ err }, 'websocket turn failed');
            failure = serverError();
          }
          last();
          if (!failure) return 499;
          emit(failureEvents(started, builder, failure));
          return failure.status;
        }
      }
    },
  });
}
