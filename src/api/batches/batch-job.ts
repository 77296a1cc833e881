// The job that runs one batch: validate every line, run the lines with bounded
// parallelism through the pipeline a POST takes (run-line.ts), then write the output
// and error files. Each line is recorded before it starts and again with its outcome,
// so a restart resumes where the batch stopped and never runs a line twice: a line a
// crash cut off is recorded failed, not run again (at most once, like a request the
// client sent once); when the ledger charged it (it ran, its answer was lost), it is
// reported with its charge, which the batch's usage counts.
import { sql } from 'kysely';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { JobContext } from '../../jobs/types.ts';
import { JobInterrupted } from '../../jobs/types.ts';
import type { Services } from '../../services.ts';
import type { BatchesTable } from '../../store/schema.ts';
import type { CallLog } from '../../pipeline/call.ts';
import { fromMicro } from '../../accounts/money.ts';
import { callRuns } from '../../credits/ledger.ts';
import { serverError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { jsonText } from '../json-text.ts';
import type { BatchEndpoints } from './batch-endpoints.ts';
import { isTerminal } from './batches-service.ts';
import { runLine, type LineOutcome } from './run-line.ts';
import { parseLine, validateInput } from './validate-input.ts';

/** Batch output files: OpenAI keeps them as large as the batch needs; this bounds one. */
const MAX_OUTPUT_BYTES = 1024 * 1024 * 1024;

export interface BatchJobOptions {
  /** Lines of one batch in flight at once. */
  concurrency: number;
  /**
   * Where a batch's input lines come from (default: its uploaded input file). The
   * messages-style surface keeps the requests of its batches as a blob.
   */
  lines?: (batch: BatchesTable) => Promise<AsyncIterable<string> | null>;
  /** Whether the end writes output and error files (default true); a surface that serves results from the recorded lines says false. */
  outputFiles?: boolean;
}

/** An output line: a response, or (a line that never ran) an error. */
type Outcome = { id: string; custom_id: string; response: LineOutcome['response'] | null; error: null | { code: string; message: string } };

export function batchJobHandler(services: Services, endpoints: BatchEndpoints, options: BatchJobOptions) {
  const { db } = services.store;
  const load = (id: string) => db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
  const set = (id: string, values: Partial<BatchesTable>) => db.updateTable('batches').set(values).where('id', '=', id).execute();

  async function* inputLines(batch: BatchesTable): AsyncGenerator<string> {
    if (options.lines) {
      const lines = await options.lines(batch);
      if (!lines) throw new InputGone();
      yield* lines;
      return;
    }
    const opened = await services.files.open(batch.account_id, batch.input_file_id);
    if (!opened) throw new InputGone();
    yield* createInterface({ input: opened.stream, crlfDelay: Infinity });
  }

  return async function runBatch(ctx: JobContext<{ batchId: string }, never>): Promise<unknown> {
    let batch = await load(ctx.payload.batchId);
    if (!batch || isTerminal(batch.status)) return null;
    const log: CallLog = services.log.child({ batch_id: batch.id });
    const key = await services.keys.get(batch.key_id);
    const endpoint = endpoints.get(batch.endpoint);

    if (batch.status === 'validating') {
      if (!key) return fail(batch.id, [{ code: 'invalid_key', message: "The batch's API key no longer exists.", param: null, line: null }]);
      let checked;
      try {
        checked = await validateInput(inputLines(batch), batch.endpoint, endpoint, key, ctx.signal);
      } catch (err) {
        if (err instanceof InputGone) return fail(batch.id, [{ code: 'invalid_file', message: 'The input file no longer exists.', param: 'input_file_id', line: null }]);
        // Cancelled while validating: nothing ran, the batch ends cancelled.
        if ((ctx.signal.reason as JobInterrupted | undefined)?.reason === 'cancelled') return finalize((await load(batch.id))!);
        throw err;
      }
      if (checked.errors.length > 0) return fail(batch.id, checked.errors, checked.total);
      await db.updateTable('batches').set({ status: 'in_progress', in_progress_at: Date.now(), total: checked.total }).where('id', '=', batch.id).where('status', '=', 'validating').execute();
      batch = (await load(batch.id))!;
    }

    if (batch.status === 'in_progress' || batch.status === 'cancelling') {
      // Lines a crash cut off: they may have run, so they are recorded failed, never run
      // again; one the ledger charged is reported with its charge (its answer is lost).
      const cut = await db.selectFrom('batch_lines').select(['line_no', 'outcome']).where('batch_id', '=', batch.id).where('state', '=', 'running').execute();
      for (const { line_no, outcome } of cut) {
        const started = outcome ? (JSON.parse(outcome) as { custom_id: string; request_id?: string }) : { custom_id: '' };
        await recordCutOff(batch, line_no, started.custom_id, started.request_id);
      }
      if (batch.status === 'in_progress' && key && endpoint) await runLines(ctx, batch, key, endpoint, log);
      batch = (await load(batch.id))!;
    }
    // A shutdown or a lost lease: the job is queued again and resumes here. A cancel
    // (the batch is `cancelling`) goes on to finalize with what ran.
    const reason = (ctx.signal.reason as JobInterrupted | undefined)?.reason;
    if (ctx.signal.aborted && reason !== 'cancelled') throw ctx.signal.reason;
    return finalize(batch);
  };

  async function runLines(ctx: JobContext<{ batchId: string }, never>, batch: BatchesTable, key: NonNullable<Awaited<ReturnType<Services['keys']['get']>>>, endpoint: NonNullable<ReturnType<BatchEndpoints['get']>>, log: CallLog) {
    const done = new Set((await db.selectFrom('batch_lines').select('line_no').where('batch_id', '=', batch.id).execute()).map((r) => r.line_no));
    const seen = new Set<string>();
    // Running lines finish even when the batch is cancelled or the process shuts down:
    // only new lines stop. A lost lease (another runner holds the batch) stops them too.
    const lines = new AbortController();
    const onAbort = () => {
      if ((ctx.signal.reason as JobInterrupted | undefined)?.reason === 'lease-lost') lines.abort(ctx.signal.reason);
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const inFlight = new Set<Promise<void>>();
    let lineNo = 0;
    let expired = false;
    try {
      for await (const text of inputLines(batch)) {
        lineNo++;
        if (text.trim() === '') continue;
        const line = parseLine(text, lineNo, batch.endpoint, endpoint, key, seen);
        if (done.has(lineNo)) continue;
        if (!expired && Date.now() > Number(batch.expires_at)) expired = true;
        if (expired) {
          // The 24h window passed: what has not run is reported, not run (as OpenAI does).
          const message = 'This request was not run before the batch expired.';
          await record(batch, lineNo, { id: newId('batch_req_'), custom_id: line.customId, response: null, error: { code: 'batch_expired', message } }, false, 0, 0, 0);
          continue;
        }
        if (ctx.signal.aborted || (await cancelling(batch.id))) break;
        while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
        // Recorded before it starts, with its request id: after a crash this line is known
        // to have (maybe) run, and the ledger tells whether it was charged.
        const requestId = newId('req_');
        const started = JSON.stringify({ custom_id: line.customId, request_id: requestId });
        await db.insertInto('batch_lines').values({ batch_id: batch.id, line_no: lineNo, state: 'running', outcome: started, ok: 0 }).execute();
        const no = lineNo;
        const p = runLine(services, endpoint, key, { customId: line.customId, body: line.body, ip: batch.caller_ip, log, signal: lines.signal, requestId })
          .then(async (o) => {
            // The usage is what the ledger charged for, whatever the surface calls its tokens.
            const { credits, usage, ...outcome } = o;
            const ok = o.response.status_code >= 200 && o.response.status_code < 300;
            await record(batch, no, outcome, ok, credits, usage.inputTokens, usage.outputTokens);
          })
          .catch((err: unknown) => log.error({ err, line: no }, 'recording a batch line failed'))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
    } finally {
      await Promise.all(inFlight);
      ctx.signal.removeEventListener('abort', onAbort);
    }
    if (expired) await db.updateTable('batches').set({ status: 'expired', expired_at: Date.now() }).where('id', '=', batch.id).where('status', '=', 'in_progress').execute();
  }

  async function cancelling(id: string): Promise<boolean> {
    const row = await db.selectFrom('batches').select('status').where('id', '=', id).executeTakeFirst();
    return row?.status === 'cancelling';
  }

  /** A line's outcome, and the batch's counters, in one transaction. */
  async function record(batch: BatchesTable, lineNo: number, outcome: Outcome, ok: boolean, credits: number, inputTokens: number, outputTokens: number) {
    // Written in slices: an embeddings line may hold millions of numbers.
    const text = await jsonText(outcome);
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('batch_lines')
        .values({ batch_id: batch.id, line_no: lineNo, state: 'done', outcome: text, ok: ok ? 1 : 0 })
        .onConflict((oc) => oc.columns(['batch_id', 'line_no']).doUpdateSet({ state: 'done', outcome: text, ok: ok ? 1 : 0 }))
        .execute();
      await trx
        .updateTable('batches')
        .set((eb) => ({
          completed: ok ? eb('completed', '+', 1) : eb.ref('completed'),
          failed: ok ? eb.ref('failed') : eb('failed', '+', 1),
          // Not run: the window passed (the only outcome without a response).
          expired: outcome.response === null ? eb('expired', '+', 1) : eb.ref('expired'),
          credits: eb('credits', '+', credits),
          input_tokens: eb('input_tokens', '+', inputTokens),
          output_tokens: eb('output_tokens', '+', outputTokens),
        }))
        .where('id', '=', batch.id)
        .execute();
    });
  }

  /**
   * A line a crash cut off. Charged in the ledger: it ran, its answer is lost, and it is
   * reported with its charge and usage (counted in the batch's). Otherwise (released or
   * never reserved) it is reported as not run again, charged nothing. A hold still there
   * belongs to a dead process and is released charging nothing.
   */
  async function recordCutOff(batch: BatchesTable, lineNo: number, customId: string, requestId: string | undefined) {
    // The line's runs, one range of the ledger's key (callRuns), summed.
    const range = requestId ? callRuns(requestId) : undefined;
    const entry = range
      ? await db
          .selectFrom('credit_reservations')
          .select([sql<number>`sum(charged)`.as('charged'), sql<number>`sum(coalesce(input_tokens, 0))`.as('input_tokens'), sql<number>`sum(coalesce(output_tokens, 0))`.as('output_tokens')])
          .where('run_id', '>=', range.from)
          .where('run_id', '<', range.to)
          .executeTakeFirst()
      : undefined;
    const credits = Number(entry?.charged ?? 0);
    if (!entry || credits <= 0) return record(batch, lineNo, interrupted(customId, requestId ?? ''), false, 0, 0, 0);
    const input = Number(entry.input_tokens ?? 0);
    const output = Number(entry.output_tokens ?? 0);
    await record(batch, lineNo, answerLost(customId, requestId!, batch.endpoint, credits, input, output), false, credits, input, output);
  }

  async function fail(id: string, errors: unknown[], total = 0) {
    await db.updateTable('batches').set({ status: 'failed', failed_at: Date.now(), errors: JSON.stringify(errors), total }).where('id', '=', id).where('status', 'in', ['validating', 'cancelling']).execute();
    return null;
  }

  /** Output and error files from the recorded lines, then the final status. Safe to run again. */
  async function finalize(batch: BatchesTable): Promise<unknown> {
    const final: BatchesTable['status'] = batch.status === 'cancelling' ? 'cancelled' : batch.status === 'expired' ? 'expired' : 'completed';
    if (batch.status === 'in_progress') await set(batch.id, { status: 'finalizing', finalizing_at: Date.now() });
    const files = options.outputFiles ?? true;
    const output = batch.output_file_id ?? (files ? await writeLines(batch, true, 'output') : null);
    const errors = batch.error_file_id ?? (files ? await writeLines(batch, false, 'error') : null);
    const stamp = final === 'completed' ? { completed_at: Date.now() } : final === 'cancelled' ? { cancelled_at: Date.now() } : {};
    await set(batch.id, { status: final, output_file_id: output, error_file_id: errors, ...stamp });
    return { status: final };
  }

  /** One file of the recorded lines (the successes, or the errors), in line order; null when there are none. */
  async function writeLines(batch: BatchesTable, ok: boolean, name: string): Promise<string | null> {
    const count = await db.selectFrom('batch_lines').select((eb) => eb.fn.countAll<number>().as('n')).where('batch_id', '=', batch.id).where('ok', '=', ok ? 1 : 0).executeTakeFirst();
    if (!count || Number(count.n) === 0) return null;
    const source = Readable.from(
      (async function* () {
        let after = 0;
        for (;;) {
          const page = await db
            .selectFrom('batch_lines')
            .select(['line_no', 'outcome'])
            .where('batch_id', '=', batch.id)
            .where('ok', '=', ok ? 1 : 0)
            .where('line_no', '>', after)
            .orderBy('line_no')
            .limit(500)
            .execute();
          if (page.length === 0) return;
          yield page.map((r) => `${r.outcome}\n`).join('');
          after = page.at(-1)!.line_no;
        }
      })(),
    );
    const file = await services.files.write(batch.account_id, { filename: `${batch.id}_${name}.jsonl`, purpose: 'batch_output', source, maxBytes: MAX_OUTPUT_BYTES });
    return file.id;
  }
}

/** The input file was deleted under a running batch. */
class InputGone extends Error {}

function interrupted(customId: string, requestId: string): Outcome {
  const error = serverError('The service restarted while this request ran; it was not run again.');
  return { id: newId('batch_req_'), custom_id: customId, response: { status_code: error.status, request_id: requestId, body: error.toBody() }, error: null };
}

/** A line that ran and was charged, whose answer a crash lost before it was recorded. */
function answerLost(customId: string, requestId: string, endpoint: string, credits: number, input: number, output: number): Outcome {
  const error = serverError(
    'The service restarted after this request ran and before its answer was recorded, so the answer is lost; it was charged for what ran (svc, usage) and is not repeated.',
  );
  const usage =
    endpoint === '/v1/responses'
      ? { input_tokens: input, output_tokens: output, total_tokens: input + output }
      : { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  return {
    id: newId('batch_req_'),
    custom_id: customId,
    response: { status_code: error.status, request_id: requestId, body: { ...error.toBody(), usage, svc: fromMicro(credits) } },
    error: null,
  };
}
