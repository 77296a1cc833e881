// Background responses (SPEC "Background response"): POST answers `queued` at once after
// the same checks as a live call, and a durable job runs the response with a Run of its
// own, through the call runner (pipeline/runner.ts): the steps a POST takes (the key as
// it is now, its limits, the account's slot waited for, an activity row). Cancel moves queued or running work to `cancelled`
// and aborts the model, which is charged only for what ran.
//
// After a restart: a run stopped by a shutdown (SIGTERM) goes back to `queued` and runs
// again from the start, since nothing was delivered (what the first attempt ran was
// charged, as for any call cut short); a run cut off by a crash (`kill -9`) cannot tell
// how far it got and is not run twice: its next claim ends it `failed` with an error,
// and its credit hold was released by the lease sweep.
//
// While it runs, its events are logged (event-log.ts), so it can be followed live from
// any instance; every change of its stored state is signalled (`response.updated`), so
// followers see its end at once.
import { ApiError, serverError } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { JobInterrupted, jobKind, type JobContext } from '../../jobs/types.ts';
import type { RouteConfig } from '../../pipeline/call.ts';
import { runCall } from '../../pipeline/runner.ts';
import { createResponse } from '../../contract/endpoints/responses.ts';
import type { Services } from '../../services.ts';
import { consume } from '../stream-answer.ts';
import { ResponseEventLog } from './event-log.ts';
import { openingEvents } from './response-stream.ts';
import { withoutSecrets, withSecrets, type McpSecrets } from './mcp-servers.ts';
import { initialResponse, newResponseId, openBuilder, prepareResponse, startResponse, type ResponseBody, type ResponsesDeps } from './response-call.ts';
import type { BackgroundResponses } from './routes.ts';

export const backgroundResponseJob = jobKind<{ responseId: string }, never, null>('responses.background', { maxAttempts: 2 });

const RUNNING = ['queued', 'in_progress'];
/** Claims a job whose MCP credentials one instance holds may take, the others handing it back. */
const HELD_ATTEMPTS = 20;
const route: RouteConfig = { auth: 'key', contract: createResponse, endpoint: '/v1/responses' };

export function backgroundResponses(services: Services, deps: ResponsesDeps): BackgroundResponses & { handler: (ctx: JobContext<{ responseId: string }, never>) => Promise<null> } {
  const { stored } = deps;
  // An mcp tool's headers and authorization never reach the job row: they wait here, in
  // this process only, until the response runs. Another instance that claims such a job
  // hands it back (a retry) for this one; a restart of this one loses them.
  const held = new Map<string, McpSecrets>();
  const instanceId = services.config.instanceId;
  const events = new ResponseEventLog(services.store.db, services.signals, services.log);
  /** Followers (on any instance) look again at once. */
  const changed = (id: string) => services.signals.publish('response.updated', id);

  async function fail(id: string, response: Record<string, any>, error: ApiError): Promise<void> {
    await stored.update(id, { ...response, status: 'failed', error: { code: error.code, message: error.message } }, { onlyIf: RUNNING });
    await changed(id);
  }

  return {
    async enqueue({ body, call, key }) {
      // Everything a live call would refuse is refused now, before anything is stored.
      const id = newResponseId();
      // The MCP servers' tools are listed when the response runs, not twice.
      const prepared = await prepareResponse(services, deps, body, key, { responseId: id, listMcpTools: false, call });
      const createdAt = Math.floor(Date.now() / 1000);
      const response = { ...initialResponse(id, createdAt, body, prepared.maxTokens, prepared.conversationId), status: 'queued' };
      const { body: kept, secrets } = withoutSecrets(body);
      if (secrets.size > 0) held.set(id, secrets);
      try {
        await services.jobs.transaction(async (trx) => {
          // With credentials held here, other instances hand the job back until this one takes it.
          const job = await services.jobs.enqueue(backgroundResponseJob, { responseId: id }, { db: trx, accountId: key.accountId, ...(secrets.size > 0 ? { maxAttempts: HELD_ATTEMPTS } : {}) });
          await stored.save(
            {
              accountId: key.accountId,
              response,
              inputItems: prepared.input,
              previousResponseId: body.previous_response_id ?? null,
              conversationId: prepared.conversationId,
              background: true,
              request: { body: kept, keyId: key.id, ip: call.ip, ...(secrets.size > 0 ? { mcpSecrets: [...secrets.keys()], heldBy: instanceId } : {}) },
              jobId: job.id,
            },
            trx,
          );
        });
      } catch (err) {
        held.delete(id);
        throw err;
      }
      return response;
    },

    async cancel(accountId, id) {
      const found = await stored.get(accountId, id);
      if (!found) return undefined;
      const cancelled = { ...found.response, status: 'cancelled' };
      if (!(await stored.update(id, cancelled, { onlyIf: RUNNING, keepRequest: true }))) return (await stored.get(accountId, id))?.response;
      await changed(id);
      if (found.jobId) await services.jobs.cancel(found.jobId);
      held.delete(id);
      return cancelled;
    },

    async handler(ctx) {
      const { responseId } = ctx.payload;
      const row = await stored.byId(responseId);
      if (!row || !RUNNING.includes(row.response.status)) return null;
      if (row.response.status === 'in_progress') {
        // A previous attempt was cut off mid-run (a crash): it is not run twice.
        await fail(responseId, row.response, serverError('The response was interrupted by a restart of the service before it finished.'));
        return null;
      }
      const request = row.request as { body: ResponseBody; keyId: string; ip: string; mcpSecrets?: string[]; heldBy?: string } | null;
      const key = request && (await services.keys.get(request.keyId));
      if (!request || !key) {
        await fail(responseId, row.response, serverError("The response's API key no longer exists."));
        return null;
      }
      const secrets = held.get(responseId);
      if (request.mcpSecrets?.length && !secrets) {
        // Held by another instance: handed back (a retry) for it to take, while attempts remain.
        if (request.heldBy !== undefined && request.heldBy !== instanceId && ctx.attempt < ctx.maxAttempts) throw new Error('the MCP credentials of this response are held by another instance');
        const labels = request.mcpSecrets.map((l) => `'${l}'`).join(', ');
        const why = request.heldBy === instanceId ? 'the service restarted before the response ran' : 'the instance holding them did not take the response up';
        await fail(responseId, row.response, serverError(`The headers and authorization of the MCP server ${labels} were kept in memory only, and ${why}: send the request again.`));
        return null;
      }
      held.delete(responseId);
      if (secrets) request.body = withSecrets(request.body, secrets);
      // A run cut short by a shutdown logged events that no longer hold: this one writes from 0.
      await events.reset(responseId);
      if (!(await stored.update(responseId, { ...row.response, status: 'in_progress' }, { onlyIf: ['queued'], keepRequest: true }))) return null;
      await run(ctx, responseId, row.response, request, key);
      return null;
    },
  };

  async function run(ctx: JobContext<{ responseId: string }, never>, id: string, response: Record<string, any>, request: { body: ResponseBody; ip: string }, key: KeyRecord): Promise<void> {
    const requeue = async () => {
      await stored.update(id, { ...response, status: 'queued' }, { onlyIf: ['in_progress'], keepRequest: true });
      await changed(id);
    };
    // The events a live stream would send, numbered alike, logged for followers.
    const log = events.writer(id, ctx.attempt);
    const { error, thrown } = await runCall(
      services,
      { route, routeLabel: 'background /v1/responses', ip: request.ip, log: services.log.child({ response_id: id }), key, body: () => request.body, signal: ctx.signal, waitForSlot: true },
      async (call) => {
        const started = await startResponse(services, deps, call, call.body as ResponseBody, key, { id, createdAt: response.created_at });
        const { builder, events: premade } = openBuilder(started);
        log.push([...openingEvents(started), ...premade]);
        const ran = await consume(started.run, ctx.signal, async () => {
          for await (const e of started.events) log.push(builder.add(e));
          log.push(builder.close());
          return builder;
        });
        // Stopped without an answer: by a cancel (the response is already cancelled), or by a shutdown (below).
        if (!ran) return;
        // Every event is written before the final state is stored: a follower that sees it has them all.
        await log.flush();
        await started.finish(ran.value, ran.credits, ran.usage);
        await changed(id);
      },
    );
    await log.flush();
    if (thrown instanceof JobInterrupted) throw thrown;
    // A shutdown puts it back in the queue: it runs again from the start after the restart.
    if ((ctx.signal.reason as JobInterrupted | undefined)?.reason === 'shutdown') {
      await requeue();
      throw ctx.signal.reason;
    }
    if (error) await fail(id, response, error);
  }
}
