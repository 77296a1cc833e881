// Streams a plan token by token as stream parts: reasoning, then text or each tool
// call's input, each opened and closed, then the finish with usage. The token budget
// (maxTokens) covers all of them, as OpenAI's max_completion_tokens does.
import { encodePrefix } from '../../../text/tokenizer.ts';
import { ProviderError, type ChatProvider, type ChatRequest, type CompletionRequest, type FinishReason, type StreamPart } from '../../types.ts';
import { clampTop, pieceLogprobs } from './logprobs.ts';
import { planChat, planCompletion, type Plan } from './plan.ts';
import { pieces } from './tokens.ts';

/** Give I/O (a client hanging up) a turn every this many pieces; cheaper than a macrotask per token. */
const PIECES_PER_MACROTASK = 16;

interface EmitOptions {
  maxTokens: number | undefined;
  /** Number of top_logprobs, or undefined when logprobs are off. */
  topLogprobs: number | undefined;
  temperature: number | undefined;
}

const nextMacrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function* emit(makePlan: () => Promise<Plan>, options: EmitOptions, signal: AbortSignal): AsyncGenerator<StreamPart> {
  const budget = options.maxTokens ?? Infinity;
  let used = 0;
  let reasoningTokens = 0;
  let sincePause = 0;
  let finish: FinishReason | undefined;

  /** Counts a piece against the budget; false when it no longer fits. */
  const take = (tokens: number): boolean => {
    if (used + tokens > budget) return false;
    used += tokens;
    return true;
  };
  /** Call after each yield: false means the consumer aborted. */
  const resume = async (): Promise<boolean> => {
    if (++sincePause >= PIECES_PER_MACROTASK) {
      sincePause = 0;
      await nextMacrotask();
    }
    return !signal.aborted;
  };

  if (signal.aborted) return;
  // Planned on the first pull; a failure is the stream's error part.
  let plan: Plan;
  try {
    plan = await makePlan();
  } catch (err) {
    // A bug is thrown on (a logged 500); only provider failures are parts.
    if (!(err instanceof ProviderError)) throw err;
    yield { type: 'error', error: err };
    return;
  }
  if (signal.aborted) return;

  // Texts are encoded as they stream (pieces() is lazy), so only what fits the budget is tokenized.
  let open: StreamPart | null = null;
  for (const piece of pieces(plan.reasoning)) {
    if (!take(piece.tokenIds.length)) {
      finish = 'length';
      break;
    }
    reasoningTokens += piece.tokenIds.length;
    if (!open) yield (open = { type: 'reasoning-start', id: 'reasoning-0' });
    yield { type: 'reasoning-delta', id: 'reasoning-0', delta: piece.text };
    if (!(await resume())) return;
  }
  if (open) yield { type: 'reasoning-end', id: 'reasoning-0' };

  if (finish === undefined && plan.output.kind === 'text') {
    open = null;
    for (const piece of pieces(plan.output.text)) {
      if (!take(piece.tokenIds.length)) {
        finish = 'length';
        break;
      }
      if (!open) yield (open = { type: 'text-start', id: 'text-0' });
      yield options.topLogprobs === undefined
        ? { type: 'text-delta', id: 'text-0', delta: piece.text }
        : { type: 'text-delta', id: 'text-0', delta: piece.text, logprobs: pieceLogprobs(piece, options.topLogprobs, plan.logprobRng, options.temperature) };
      if (!(await resume())) return;
    }
    if (open) yield { type: 'text-end', id: 'text-0' };
    // JSON cut short by a generation budget ends like JSON cut by max_tokens.
    if (plan.output.truncated) finish = 'length';
  } else if (finish === undefined && plan.output.kind === 'tool_calls') {
    calls: for (const call of plan.output.calls) {
      // The function name is output the model emits, so it counts too.
      if (!take(encodePrefix(call.name, budget - used).length)) {
        finish = 'length';
        break;
      }
      yield { type: 'tool-input-start', id: call.id, toolName: call.name };
      if (!(await resume())) return;
      for (const piece of pieces(call.arguments)) {
        if (!take(piece.tokenIds.length)) {
          finish = 'length';
          yield { type: 'tool-input-end', id: call.id };
          break calls;
        }
        yield { type: 'tool-input-delta', id: call.id, delta: piece.text };
        if (!(await resume())) return;
      }
      yield { type: 'tool-input-end', id: call.id };
      if (call.truncated) {
        finish = 'length';
        break;
      }
    }
    finish ??= 'tool_calls';
  }

  if (signal.aborted) return;
  const stopSequence = finish === undefined && plan.output.kind === 'text' ? plan.output.stopSequence : undefined;
  yield { type: 'finish', reason: finish ?? 'stop', usage: { inputTokens: plan.inputTokens, outputTokens: used, reasoningTokens }, ...(stopSequence !== undefined ? { stopSequence } : {}) };
}

export function streamChat(request: ChatRequest, signal: AbortSignal): AsyncGenerator<StreamPart> {
  const topLogprobs = request.logprobs ? clampTop(request.topLogprobs) : undefined;
  return emit(() => planChat(request), { maxTokens: request.maxTokens, topLogprobs, temperature: request.temperature }, signal);
}

export function streamCompletion(request: CompletionRequest, signal: AbortSignal): AsyncGenerator<StreamPart> {
  return emit(() => planCompletion(request), { maxTokens: request.maxTokens, topLogprobs: undefined, temperature: request.temperature }, signal);
}

export function createOfflineEngine(): ChatProvider {
  return {
    name: 'offline',
    chat: streamChat,
    complete: streamCompletion,
  };
}
