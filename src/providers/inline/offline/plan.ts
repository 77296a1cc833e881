// Decides everything a request will produce, synchronously and without
// streaming: reasoning text, then either text or tool calls. engine.ts only
// walks the plan token by token.
import type { ChatRequest, CompletionRequest, ResponseFormat } from '../../types.ts';
import { composeAnswer, verbosityFromInstructions, type Answer, type Verbosity } from './answer.ts';
import { composeCompletion } from './completion.ts';
import { readConversation } from './conversation.ts';
import { createHints } from './hints.ts';
import { generateFromSchema } from './json-from-schema.ts';
import { composeReasoning, type ReasoningEffort } from './reasoning.ts';
import { hashString, mulberry32, requestRng, type Rng } from './rng.ts';
import { countChatTokens, countTokens } from './tokens.ts';
import { planToolCalls, type PlannedCall } from './tool-selection.ts';

export interface Plan {
  inputTokens: number;
  /** "" when the model does not reason. */
  reasoning: string;
  output: { kind: 'text'; text: string } | { kind: 'tool_calls'; calls: PlannedCall[] };
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
  let end = text.length;
  for (const s of stop ?? []) {
    if (s === '') continue;
    const at = text.indexOf(s);
    if (at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}

function formatOutput(answer: Answer, message: string, format: ResponseFormat | undefined): string {
  if (format?.type === 'json_object') return JSON.stringify({ answer: answer.text });
  if (format?.type === 'json_schema') {
    const value = answer.arithmetic?.value;
    const hints = createHints(message, {
      answer: answer.text,
      ...(typeof value === 'number' ? { numericAnswer: value } : {}),
      ...(answer.arithmetic ? { expression: answer.arithmetic.expression } : {}),
    });
    return JSON.stringify(generateFromSchema(format.schema, hints));
  }
  return answer.text;
}

function schemaTokens(format: ResponseFormat | undefined): number {
  return format?.type === 'json_schema' ? countTokens(JSON.stringify(format.schema)) : 0;
}

export function planChat(request: ChatRequest): Plan {
  const conv = readConversation(request.messages);
  const fingerprint = request.model + '\u0000' + JSON.stringify(request.messages) + '\u0000' + (request.tools ?? []).map((t) => t.name).join(',');
  const rng = requestRng(fingerprint, request.seed, request.temperature);
  const verbosity: Verbosity = request.verbosity ?? verbosityFromInstructions(conv.instructions) ?? 'medium';
  const json = request.responseFormat !== undefined && request.responseFormat.type !== 'text';

  const calls = planToolCalls(
    {
      tools: request.tools ?? [],
      toolChoice: request.toolChoice ?? 'auto',
      parallelToolCalls: request.parallelToolCalls !== false, // OpenAI's default is true
      message: conv.lastUserText,
      afterToolResult: conv.toolResults.length > 0,
    },
    rng,
  );

  let output: Plan['output'];
  let answer: Answer | undefined;
  if (calls.length > 0) {
    output = { kind: 'tool_calls', calls };
  } else {
    answer = composeAnswer(conv, verbosity, rng);
    output = { kind: 'text', text: cutAtStop(formatOutput(answer, conv.lastUserText, request.responseFormat), request.stop) };
  }

  const reasoning = composeReasoning(
    { message: conv.lastUserText, ...(answer ? { answer } : {}), toolNames: calls.map((c) => c.name), json },
    effortFor(request.model, request.reasoningEffort),
  );

  return {
    inputTokens: countChatTokens(request.messages, request.tools) + schemaTokens(request.responseFormat),
    reasoning,
    output,
    logprobRng: mulberry32(hashString('logprobs', rng.int(2 ** 32))),
  };
}

export function planCompletion(request: CompletionRequest): Plan {
  const rng = requestRng(request.model + '\u0000' + request.prompt, request.seed, request.temperature);
  const verbosity: Verbosity = request.verbosity ?? 'medium';
  const format = request.responseFormat;
  const json = format !== undefined && format.type !== 'text';
  const continuation = composeCompletion(request.prompt, verbosity, rng);
  const answer: Answer = { intent: 'echo', text: continuation.trim() };
  const text = json ? formatOutput(answer, request.prompt, format) : continuation;
  const reasoning = composeReasoning(
    { message: request.prompt, answer, toolNames: [], json },
    effortFor(request.model, request.reasoningEffort),
  );
  return {
    inputTokens: countTokens(request.prompt),
    reasoning,
    output: { kind: 'text', text: cutAtStop(text, request.stop) },
    logprobRng: mulberry32(hashString('logprobs', rng.int(2 ** 32))),
  };
}
