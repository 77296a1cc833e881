// Decides everything a request will produce before streaming: reasoning text,
// then either text or tool calls. engine.ts only walks the plan token by token.
// Planning is asynchronous only to count input tokens without holding the event
// loop; JSON output is generated within the request's output cap.
import { countTokensAsync } from '../../../text/tokenizer.ts';
import type { ChatRequest, CompletionRequest, ResponseFormat } from '../../types.ts';
import { composeAnswer, verbosityFromInstructions, type Answer, type Verbosity } from './answer.ts';
import { composeCompletion } from './completion.ts';
import { excerpt, readConversation } from './conversation.ts';
import { createHints } from './hints.ts';
import { generateJson, MAX_OUTPUT_CHARS, MAX_WORK, type GenerationLimits } from './json-from-schema.ts';
import { composeReasoning, type ReasoningEffort } from './reasoning.ts';
import { hashString, mulberry32, requestRng, type Rng } from './rng.ts';
import { countChatTokens } from './tokens.ts';
import { planToolCalls, type PlannedCall } from './tool-selection.ts';

export interface Plan {
  inputTokens: number;
  /** "" when the model does not reason. */
  reasoning: string;
  /**
   * `truncated`: generation stopped at a budget (the text is a JSON prefix), so the
   * stream ends with finish_reason "length" even when all of it fits max_tokens.
   */
  output: { kind: 'text'; text: string; truncated?: boolean; stopSequence?: string } | { kind: 'tool_calls'; calls: PlannedCall[] };
  /** Separate stream of randomness for logprobs, so asking for them changes no wording. */
  logprobRng: Rng;
}

/** agent-think reasons at medium effort unless told otherwise. */
function effortFor(model: string, effort: ReasoningEffort | undefined): ReasoningEffort {
  if (model !== 'agent-think') return 'none';
  return effort ?? 'medium';
}

/** Cuts text before the first stop sequence, so none ever appears. */
export function cutAtStop(text: string, stop: readonly string[] | undefined): string {
  return stopIn(text, stop).text;
}

/** The text before the first stop sequence, and the sequence found there (the messages surface names it). */
function stopIn(text: string, stop: readonly string[] | undefined): { text: string; sequence?: string } {
  let end = text.length;
  let sequence: string | undefined;
  for (const s of stop ?? []) {
    if (s === '') continue;
    const at = text.indexOf(s);
    if (at >= 0 && at < end) {
      end = at;
      sequence = s;
    }
  }
  return sequence === undefined ? { text } : { text: text.slice(0, end), sequence };
}

/**
 * Characters a tool call or JSON answer may take: enough to fill the output cap (o200k
 * averages about 4 characters a token, a run of one letter 8), within a fixed maximum.
 */
const CHARS_PER_TOKEN = 16;

export function generationLimits(maxTokens: number | undefined): GenerationLimits {
  const chars = maxTokens === undefined ? MAX_OUTPUT_CHARS : Math.min(MAX_OUTPUT_CHARS, maxTokens * CHARS_PER_TOKEN);
  return { maxChars: chars, maxWork: MAX_WORK };
}

function formatOutput(answer: Answer, message: string, format: ResponseFormat | undefined, limits: GenerationLimits): { text: string; complete: boolean } {
  if (format?.type === 'json_object') return { text: JSON.stringify({ answer: answer.text }), complete: true };
  if (format?.type === 'json_schema') {
    const value = answer.arithmetic?.value;
    const hints = createHints(message, {
      answer: answer.text,
      ...(typeof value === 'number' ? { numericAnswer: value } : {}),
      ...(answer.arithmetic ? { expression: answer.arithmetic.expression } : {}),
    });
    return generateJson(format.schema, hints, limits);
  }
  return { text: answer.text, complete: true };
}

/** The text output, cut at a stop sequence; one cut there ended normally, not at a budget. */
function textOutput(out: { text: string; complete: boolean }, stop: readonly string[] | undefined): Plan['output'] {
  const { text, sequence } = stopIn(out.text, stop);
  if (sequence !== undefined) return { kind: 'text', text, stopSequence: sequence };
  return out.complete ? { kind: 'text', text } : { kind: 'text', text, truncated: true };
}

async function schemaTokens(format: ResponseFormat | undefined): Promise<number> {
  return format?.type === 'json_schema' ? countTokensAsync(JSON.stringify(format.schema)) : 0;
}

export async function planChat(request: ChatRequest): Promise<Plan> {
  const conv = readConversation(request.messages);
  const fingerprint = request.model + '\u0000' + JSON.stringify(request.messages) + '\u0000' + (request.tools ?? []).map((t) => t.name).join(',');
  const rng = requestRng(fingerprint, request.seed, request.temperature);
  const verbosity: Verbosity = request.verbosity ?? verbosityFromInstructions(conv.instructions) ?? 'medium';
  const json = request.responseFormat !== undefined && request.responseFormat.type !== 'text';

  const limits = generationLimits(request.maxTokens);
  const calls = planToolCalls(
    {
      tools: request.tools ?? [],
      toolChoice: request.toolChoice ?? 'auto',
      parallelToolCalls: request.parallelToolCalls !== false, // OpenAI's default is true
      message: conv.lastUserText,
      afterToolResult: conv.toolResults.length > 0,
      fences: conv.fences,
    },
    rng,
    limits,
  );

  let output: Plan['output'];
  let answer: Answer | undefined;
  if (calls.length > 0) {
    output = { kind: 'tool_calls', calls };
  } else {
    answer = composeAnswer(conv, verbosity, rng);
    output = textOutput(formatOutput(answer, conv.lastUserText, request.responseFormat, limits), request.stop);
  }

  const reasoning = composeReasoning(
    { message: conv.lastUserText, ...(answer ? { answer } : {}), toolNames: calls.map((c) => c.name), json },
    effortFor(request.model, request.reasoningEffort),
  );

  return {
    inputTokens: await countInputTokens(request),
    reasoning,
    output,
    logprobRng: mulberry32(hashString('logprobs', rng.int(2 ** 32))),
  };
}

/** The input tokens a chat request is charged for on this engine (a surface's count_tokens answers the same). */
export async function countInputTokens(request: Pick<ChatRequest, 'messages' | 'tools' | 'responseFormat'>): Promise<number> {
  return (await countChatTokens(request.messages, request.tools)) + (await schemaTokens(request.responseFormat));
}

export async function planCompletion(request: CompletionRequest): Promise<Plan> {
  const rng = requestRng(request.model + '\u0000' + request.prompt, request.seed, request.temperature);
  const verbosity: Verbosity = request.verbosity ?? 'medium';
  const format = request.responseFormat;
  const json = format !== undefined && format.type !== 'text';
  const prompt = excerpt(request.prompt);
  const continuation = composeCompletion(prompt, verbosity, rng);
  const answer: Answer = { intent: 'echo', text: continuation.trim() };
  const out = json ? formatOutput(answer, prompt, format, generationLimits(request.maxTokens)) : { text: continuation, complete: true };
  const reasoning = composeReasoning(
    { message: prompt, answer, toolNames: [], json },
    effortFor(request.model, request.reasoningEffort),
  );
  return {
    inputTokens: await countTokensAsync(request.prompt),
    reasoning,
    output: textOutput(out, request.stop),
    logprobRng: mulberry32(hashString('logprobs', rng.int(2 ** 32))),
  };
}
