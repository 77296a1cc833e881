// A Run: one unit of charged work under the credit ledger, whoever started it (an HTTP
// request, a batch line, a background job, a WebSocket turn). A call holds any number
// of runs (a model call, each step of a tool loop that reserves apart, each tool fee),
// each under its own run id in the ledger (runIdFor). A run owns its reservation
// (taken before the work: 429 when the account cannot cover it; extended per step of
// a tool loop), its abort signal (the call's: a caller that goes away, or a cancelled
// batch, stops it), and its usage and cost, and it settles once to what actually ran,
// however it ends (finished, caller gone, error). Each settlement adds its figures to
// the call (pipeline/call.ts), so the activity row sums the call's runs.
import type { ChatModel } from '../contract/models.ts';
import { outOfCredits, serverError } from '../errors.ts';
import { callSignal, type Call } from '../pipeline/call.ts';
import type { KeyRecord } from '../keys/keys-service.ts';
import type { StreamPart, Usage } from '../providers/types.ts';
import type { Services } from '../services.ts';
import { countTokensAsync } from '../text/tokenizer.ts';
import { runIdFor, type Reservation } from './ledger.ts';
import { microCreditsFor, usdFor, type Price } from './pricing.ts';

/** Tokens counted for each image, file or audio part in the estimate (a generous upper bound). */
export const ATTACHMENT_TOKENS = 1_500;

export interface InputEstimate {
  /** An upper bound of the input tokens: what is reserved. */
  readonly bound: number;
  /** The counted input tokens, charged when a call is cut short before the provider reports usage. */
  counted(): Promise<number>;
}

/**
 * Estimates the input tokens of a request body's conversation. The reservation takes
 * its UTF-8 length, an upper bound (a byte-level BPE token covers at least one byte)
 * that costs nothing to compute; the output cap dominates a typical reservation anyway.
 * Tokenizing every request would cost CPU on the hot path, so the tokenizer runs only
 * when a call ends without the provider's usage (asynchronously: a long prompt never
 * holds the event loop).
 */
/** Micro-credits for an input bound plus an output cap at the model's prices. */
function estimateFor(services: Services, price: Price, inputTokens: number, outputTokens: number): number {
  return microCreditsFor(usdFor(price, { inputTokens, outputTokens }), services.config.creditsPerUsd);
}

// Hot-path objects are classes with prototype methods rather than object literals of
// closures: tsx compiles with esbuild's keepNames, which wraps every named closure in a
// __name() call (an Object.defineProperty) each time one is made.

class ConversationEstimate implements InputEstimate {
  readonly bound: number;
  constructor(
    private readonly text: string,
    private readonly extra: number,
  ) {
    this.bound = Buffer.byteLength(text) + extra;
  }

  async counted(): Promise<number> {
    return (await countTokensAsync(this.text)) + this.extra;
  }
}

export function estimateInputTokens(conversation: unknown, attachments: number): InputEstimate {
  return new ConversationEstimate(JSON.stringify(conversation) ?? '', attachments * ATTACHMENT_TOKENS + 16);
}

/**
 * A provider stream with every part observed by its run. The provider's `error` part is
 * thrown here, the one place, so every consumer handles a failure as before (the stream
 * driver answers it as a JSON error or the surface's error event). A plain iterator
 * rather than an async generator: one promise per part instead of a generator's
 * machinery, on a path every token of every answer takes.
 */
class Metered implements AsyncIterableIterator<StreamPart> {
  private readonly source: AsyncIterator<StreamPart>;

  constructor(
    events: AsyncIterable<StreamPart>,
    private readonly run: Run,
  ) {
    this.source = events[Symbol.asyncIterator]();
  }

  next(): Promise<IteratorResult<StreamPart>> {
    return this.source.next().then(this.seen);
  }

  // Made once per stream (not per part): `then` needs a function bound to this stream.
  private readonly seen = (r: IteratorResult<StreamPart>): IteratorResult<StreamPart> | Promise<never> => {
    if (r.done) return r;
    if (r.value.type === 'error') {
      // The provider is told the stream is over (it releases its call), then the failure
      // goes to the consumer. Nothing is observed: a failure as the first part ran nothing.
      const { error } = r.value;
      return Promise.resolve(this.source.return?.()).then(
        () => Promise.reject(error),
        () => Promise.reject(error),
      );
    }
    this.run.observe(r.value);
    return r;
  };

  // Stopping early (client gone, error) must reach the provider so it closes its call.
  return(value?: unknown): Promise<IteratorResult<StreamPart>> {
    return this.source.return ? this.source.return(value) : Promise.resolve({ done: true as const, value: value as undefined });
  }

  throw(err?: unknown): Promise<IteratorResult<StreamPart>> {
    return this.source.throw ? this.source.throw(err) : Promise.reject(err);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<StreamPart> {
    return this;
  }
}

export class Run {
  private usage: Usage | null = null;
  private providerCostUsd: number | null = null;
  private emitted = '';
  /** Did the provider produce anything? A call that failed before its first event ran nothing. */
  private started = false;
  private closed: Promise<{ credits: number; usage: Usage }> | null = null;
  /** Micro-credits of the tool fees its loop charged (runs of their own), reported with its own charge. */
  private fees = 0;
  /** The first step's input estimate, then each further step's (extend). */
  private readonly stepInputs: InputEstimate[];
  private markSettled!: () => void;
  /** Resolves when close() has settled the reservation (whoever called it). */
  readonly settled = new Promise<void>((resolve) => (this.markSettled = resolve));

  private constructor(
    private readonly services: Services,
    private readonly state: Call,
    private readonly key: KeyRecord,
    private readonly price: Price,
    input: InputEstimate,
    private readonly reservation: Reservation,
  ) {
    this.stepInputs = [input];
  }

  /**
   * Reserves credits for the input's token bound plus `maxOutputTokens` at the model's
   * prices (a chat model's from the chat backend, or the `price` given, e.g. an
   * embedding model's), under the call's id; the call's finish step waits for the settlement.
   */
  static async open(
    services: Services,
    call: Call,
    opts: { key: KeyRecord; input: InputEstimate; maxOutputTokens: number } & ({ model: ChatModel } | { price: Price }),
  ): Promise<Run> {
    const { key, input } = opts;
    const price = 'price' in opts ? opts.price : services.engines.price('chat', opts.model);
    // The activity log owes this call a row from now on: until it is written, a crash
    // leaves it to be rebuilt from the ledger entry (activity/recover.ts).
    const owed = services.activity.expect(call.id);
    if (owed) await owed;
    const reservation = await reserveFor(
      services,
      call,
      key,
      estimateFor(services, price, input.bound, opts.maxOutputTokens),
      opts.maxOutputTokens > 0
        ? 'This account does not have enough credits for this request (its input plus the output cap). Add credits or lower max_tokens.'
        : 'This account does not have enough credits for this request (its input). Add credits.',
    );
    const run = new Run(services, call, key, price, input, reservation);
    call.runs.push(run);
    return run;
  }

  /**
   * Charges a flat fee (a tool call) or a cost already known (what a provider reported
   * for a forwarded request) as a run of its own: held and settled at once, 429
   * insufficient_quota when the account cannot cover it. Returns the micro-credits charged.
   */
  static async charge(services: Services, call: Call, opts: { key: KeyRecord; costUsd: number; usage?: { inputTokens: number; outputTokens: number } }): Promise<number> {
    const amount = microCreditsFor(opts.costUsd, services.config.creditsPerUsd);
    const owed = services.activity.expect(call.id);
    if (owed) await owed;
    const reservation = await reserveFor(services, call, opts.key, amount, 'This account does not have enough credits for this charge. Add credits.');
    const usage = opts.usage ?? { inputTokens: 0, outputTokens: 0 };
    const costUsd = Math.round(opts.costUsd * 1_000_000);
    const credits = await services.ledger.settle(reservation, amount, { ...usage, costUsd });
    addFigures(call, usage, credits, costUsd);
    await services.caps.record(opts.key, { tokens: usage.inputTokens + usage.outputTokens, credits, spend: costUsd }, Date.now());
    return credits;
  }

  /** Settles now with what ran so far (the call's finish step, for a run that has not ended in time). */
  settle(): Promise<unknown> {
    return this.close();
  }

  /** Aborted when the caller goes away or the run is cancelled; providers stop on it. */
  get signal(): AbortSignal {
    return callSignal(this.state);
  }

  /** Stops the run: its provider call ends, and it settles for what ran. */
  cancel(reason?: unknown): void {
    callSignal(this.state);
    this.state.abort!.abort(reason);
  }

  /**
   * Holds more credits before another step of a tool loop: its input (the conversation
   * so far) plus its output cap, so a multi-step run is never capped by its first
   * estimate. 429 insufficient_quota when the account cannot cover it.
   */
  async extend(stepInput: InputEstimate, maxOutputTokens: number): Promise<void> {
    const extra = estimateFor(this.services, this.price, stepInput.bound, maxOutputTokens);
    if (!(await this.services.ledger.extend(this.reservation, extra))) {
      throw outOfCredits("This account does not have enough credits for the run's next step. Add credits or lower max_tokens.");
    }
    // Each step reads its whole conversation: a run without the provider's usage counts every step's input.
    this.stepInputs.push(stepInput);
    this.state.creditsReserved += extra;
  }

  /** The input tokens of every step, counted (when the provider reported none). */
  private async countedInput(): Promise<number> {
    let total = 0;
    for (const input of this.stepInputs) total += await input.counted();
    return total;
  }

  /**
   * The agent loop's hooks for this run: each further step first holds credits for its
   * input (the conversation so far, `attachments` counted as in the first estimate) and
   * output cap; a tool with a price (even 0) is charged as a run of its own before it runs.
   */
  agentHooks(attachments: number, maxOutputTokens: number) {
    return {
      beforeStep: (messages: unknown) => this.extend(estimateInputTokens(messages, attachments), maxOutputTokens),
      beforeTool: async (tool: { feeUsd?: number }) => {
        // A priced tool's call is a run of its own, even at a price of 0 (the ledger shows each call).
        if (tool.feeUsd !== undefined) this.fees += await Run.charge(this.services, this.state, { key: this.key, costUsd: tool.feeUsd });
      },
    };
  }

  /** What ran, for work that is not a stream (embeddings): its usage, and its cost where the provider reported one. */
  report(usage: Usage, costUsd?: number): void {
    this.usage = usage;
    if (costUsd !== undefined) this.providerCostUsd = costUsd;
    this.started = true;
  }

  observe(part: StreamPart): void {
    switch (part.type) {
      case 'finish':
        if (part.usage) this.usage = part.usage;
        if (part.costUsd !== undefined) this.providerCostUsd = part.costUsd;
        break;
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-input-delta':
        this.emitted += part.delta;
        break;
      case 'tool-input-start':
        this.emitted += part.toolName;
        break;
    }
    this.started = true;
  }

  /** Wraps a provider stream so every part is observed (Metered). */
  meter(events: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
    return new Metered(events, this);
  }

  /**
   * Settles once: the provider's reported usage and cost when it gave them, else the
   * input estimate and the tokens actually emitted (a call cut short by the client or
   * an error), and nothing for a call that failed before producing anything. Returns the
   * credits charged (micro: this run's and the tool fees its loop charged, what the
   * surface reports) and the usage charged for.
   */
  close(): Promise<{ credits: number; usage: Usage }> {
    this.closed ??= (async () => {
      const usage =
        this.usage ?? (this.started ? { inputTokens: await this.countedInput(), outputTokens: await countTokensAsync(this.emitted) } : { inputTokens: 0, outputTokens: 0 });
      const usd = this.providerCostUsd ?? usdFor(this.price, usage);
      const costUsd = Math.round(usd * 1_000_000);
      const credits = await this.services.ledger.settle(this.reservation, microCreditsFor(usd, this.services.config.creditsPerUsd), {
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        costUsd,
      });
      const now = Date.now();
      addFigures(this.state, usage, credits, costUsd);
      await this.services.caps.record(this.key, { tokens: usage.inputTokens + usage.outputTokens, credits, spend: costUsd }, now);
      return { credits: credits + this.fees, usage };
    })();
    this.closed
      .finally(() => {
        const runs = this.state.runs;
        const i = runs.indexOf(this);
        if (i >= 0) runs.splice(i, 1);
        this.markSettled();
      })
      .catch(() => undefined);
    return this.closed;
  }
}

/**
 * Holds `amount` for the call's next run, under its run id; the call's reserved figure
 * grows by it. A call finished while this reserved (its caller went away) saw no run
 * to wait for: the hold goes back at once, and nothing runs.
 */
async function reserveFor(services: Services, call: Call, key: KeyRecord, amount: number, refusal: string): Promise<Reservation> {
  const runId = runIdFor(call.id, call.runCount++);
  const reservation = await services.ledger.reserve(key.accountId, key.id, { runId, requestId: call.id }, amount, { endpoint: call.route?.endpoint ?? '', model: call.model });
  if (!reservation) throw outOfCredits(refusal);
  if (call.done) {
    await services.ledger.settle(reservation, 0);
    throw serverError('The caller went away before the work ran.');
  }
  call.creditsReserved += reservation.amount;
  return reservation;
}

/** A settled run's figures, added to its call's (the activity row sums the runs). */
function addFigures(call: Call, usage: { inputTokens: number; outputTokens: number }, credits: number, costUsd: number): void {
  call.usage.inputTokens += usage.inputTokens;
  call.usage.outputTokens += usage.outputTokens;
  call.creditsSettled += credits;
  call.costUsd += costUsd;
}
