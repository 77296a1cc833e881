// The Responses WebSocket (SPEC "Events" item 3): GET /v1/responses with Upgrade:
// websocket. The key is checked at the upgrade (a refusal is the usual JSON error before
// any 101); each `response.create` message is a call of its own through the pipeline a
// POST takes (the contract, the key's limits and the account's slot, a Run, an activity
// row) and gets the same events as the SSE stream, one JSON message each. One response
// at a time per socket; `background` and any other message type are refused with
// `{type: "error", status, error}` and the socket stays open. `store: false` responses
// can be continued by id within the session that made them (kept in memory, bounded).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { createResponse } from '../../contract/endpoints/responses.ts';
import { ApiError, insufficientQuota, invalidRequest, methodNotAllowed, serverError } from '../../errors.ts';
import { presentedSecret } from '../../http/authenticate.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { admitCall } from '../../pipeline/admit.ts';
import { admitKey, authenticateCall } from '../../pipeline/authenticate.ts';
import { abortCall, newCall, type Call, type RouteConfig } from '../../pipeline/call.ts';
import { checkCall } from '../../pipeline/contract.ts';
import { finishCall } from '../../pipeline/finish.ts';
import { providerFailure } from '../stream-answer.ts';
import type { Services } from '../../services.ts';
import type { Item } from './items.ts';
import { OutputBuilder, type StreamEvent } from './output-builder.ts';
import { startResponse, type ResponseBody, type ResponsesDeps } from './response-call.ts';
import { failureEvents, finalEvents, openingEvents, sequencer } from './response-stream.ts';
import type { StoredResponses } from './stored-responses.ts';

/** SPEC: up to 8 sockets per account at once. */
export const SOCKETS_PER_ACCOUNT = 8;
/** Unstored responses a session keeps for continuation (the oldest are forgotten first). */
const SESSION_RESPONSES = 32;

const route: RouteConfig = { auth: 'key', contract: createResponse, endpoint: '/v1/responses' };

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
  const open = new Map<string, number>();
  const sessionMs = services.config.wsSessionMs;

  app.route({
    method: 'GET',
    url: '/v1/responses',
    config: { agent: { auth: 'none', endpoint: '/v1/responses' } satisfies RouteConfig },
    // The key at the upgrade, with the same refusals as a POST; a GET without an upgrade is 405.
    preHandler: async (request: FastifyRequest) => {
      if (!(request as { ws?: boolean }).ws) throw methodNotAllowed('GET /v1/responses opens a WebSocket (send Upgrade: websocket); create a response with POST.', 'POST');
      const session = newCall({ id: request.state.id, method: 'GET', route, routeLabel: 'websocket /v1/responses', ip: request.ip, log: request.log });
      await authenticateCall(services, session, presentedSecret(request));
      const accountId = session.key!.accountId;
      if ((open.get(accountId) ?? 0) >= SOCKETS_PER_ACCOUNT) throw insufficientQuota(`This account already has ${SOCKETS_PER_ACCOUNT} open Responses WebSockets.`);
      (request as { sessionKey?: KeyRecord }).sessionKey = session.key!;
    },
    handler: async () => {
      throw methodNotAllowed('GET /v1/responses opens a WebSocket (send Upgrade: websocket); create a response with POST.', 'POST');
    },
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      const key = (request as { sessionKey?: KeyRecord }).sessionKey!;
      const accountId = key.accountId;
      open.set(accountId, (open.get(accountId) ?? 0) + 1);
      const unstored = new Map<string, SessionResponse>();
      const sessionDeps: ResponsesDeps = { ...deps, stored: sessionStore(deps.stored, unstored) };
      let running: Call | null = null;
      const expire = setTimeout(() => socket.close(1000, 'session expired after its maximum duration'), sessionMs).unref();
      socket.on('close', () => {
        clearTimeout(expire);
        open.set(accountId, (open.get(accountId) ?? 1) - 1);
        if (open.get(accountId) === 0) open.delete(accountId);
        // Made now if the turn has not asked for it yet, so the turn stops wherever it is.
        if (running) abortCall(running);
      });

      const send = (event: unknown) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
      };
      const sendError = (error: ApiError) => send({ type: 'error', status: error.status, error: error.toBody().error });

      socket.on('message', (data, isBinary) => {
        let message: Record<string, unknown>;
        try {
          if (isBinary) throw new Error('binary');
          const parsed: unknown = JSON.parse(String(data));
          if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
          message = parsed as Record<string, unknown>;
        } catch {
          sendError(invalidRequest('Each message is one JSON object, e.g. {"type": "response.create", ...}.'));
          return;
        }
        if (message.type !== 'response.create') {
          sendError(invalidRequest(`The message type '${String(message.type).slice(0, 64)}' is not offered here: send response.create.`, 'type'));
          return;
        }
        if (running) {
          sendError(invalidRequest('A response is already running on this socket: wait for its last event.'));
          return;
        }
        const { type: _type, stream: _stream, ...body } = message;
        const call = newCall({ id: newId('req_'), method: 'POST', route, routeLabel: 'websocket /v1/responses', ip: request.ip, log: request.log });
        running = call;
        void turn(call, body).finally(() => {
          running = null;
        });
      });

      async function turn(call: Call, body: Record<string, unknown>): Promise<void> {
        let status = 200;
        try {
          if (body.background === true) throw invalidRequest('background is not offered on the WebSocket: use POST /v1/responses.', 'background');
          admitKey(services, call, (await services.keys.get(key.id)) ?? key);
          checkCall(call, { body });
          await admitCall(services, call);
          const started = await startResponse(services, sessionDeps, call, call.body as ResponseBody, call.key!);
          const builder = new OutputBuilder(started.kinds, started.includeLogprobs, started.include);
          const seq = sequencer();
          const emit = (events: StreamEvent[]) => events.forEach((e) => send(seq(e)));
          try {
            emit(openingEvents(started));
            for await (const part of started.events) emit(builder.add(part));
            const { credits, usage } = await started.run.close();
            const events = await finalEvents(started, builder, credits, usage);
            const response = events.at(-1)!.response as Record<string, any>;
            if (response.store === false) {
              unstored.set(response.id, { inputItems: started.inputItems, output: builder.output, previousResponseId: response.previous_response_id });
              if (unstored.size > SESSION_RESPONSES) unstored.delete(unstored.keys().next().value!);
            }
            emit(events);
          } catch (err) {
            await started.run.close().catch(() => undefined);
            let failure: ApiError | null;
            try {
              failure = providerFailure(err, started.run.signal);
            } catch {
              call.log.error({ err }, 'websocket turn failed');
              failure = serverError();
            }
            if (failure) {
              status = failure.status;
              emit(failureEvents(started, builder, failure));
            } else status = 499;
          }
        } catch (err) {
          const error = err instanceof ApiError ? err : serverError();
          if (!(err instanceof ApiError)) call.log.error({ err }, 'websocket turn failed');
          status = error.status;
          call.errorCode = error.code;
          sendError(error);
        } finally {
          await finishCall(services, call, status);
        }
      }
    },
  });
}
