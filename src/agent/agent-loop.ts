// The assistant's own tool loop (SPEC "What the service does" item 7), one for every
// surface (chat, Responses, batch lines, background runs): without client tools, a
// format or logprobs, the model may call the service's tools (web
// search, pages, images...) before answering. The registry decides which tools a key
// gets; offline none are enabled yet. A request's hosted tools (Responses file_search)
// are service tools too, built per request, and run beside the request's client tools.
import type { KeyRecord } from '../keys/keys-service.ts';
import type { ChatMessage, ChatProvider, ChatRequest, FinishReason, FunctionTool, StreamPart, Usage } from '../providers/types.ts';

/** What a tool run gives: the text the model reads, and what the surface shows of it. */
export interface ToolOutput {
  text: string;
  /** Structured detail for the surface's item (a file search's results); the model never sees it. */
  data?: unknown;
}

export interface AgentTool {
  definition: FunctionTool;
  /** A flat fee per call (USD), charged as a run of its own before the tool runs (AgentHooks.beforeTool). */
  feeUsd?: number;
  run(argumentsJson: string, signal: AbortSignal): Promise<string | ToolOutput>;
}

export interface ToolRegistry {
  /** The service tools this key may use. */
  available(key: KeyRecord): AgentTool[];
}

/** No service tools are enabled yet; hosted tools register here as they arrive. */
export const emptyToolRegistry: ToolRegistry = { available: () => [] };

const MAX_STEPS = 8;

export interface AgentHooks {
  /** Before every step after the first, with the conversation that step sends (the run extends its reservation). */
  beforeStep?(messages: readonly ChatMessage[]): Promise<void>;
  /** Before each service tool runs (its fee is charged; a refusal stops the loop). */
  beforeTool?(tool: AgentTool): Promise<void>;
}

/**
 * Runs the conversation, executing service-tool calls between model steps. Text and
 * reasoning stream through as they come. A service call's input (providerExecuted) is
 * passed on whole once its step has ended, just before it runs, then its
 * `tool-result`: so a surface can open its item, show it running and close it before
 * the next one. Client tools the request carries (`request.tools`) are offered beside
 * the service's; a step that calls one ends the loop there (finish `tool_calls`), its
 * calls streamed as the model gives them, after the step's service calls have run.
 * Each step's text and reasoning stay in the conversation the next step sees, beside
 * its tool calls and their results. One finish ends it, with the steps' usage summed.
 * With no service tools there is one step: the model's own stream, unwrapped.
 */
export function runAgent(provider: ChatProvider, request: ChatRequest, tools: AgentTool[], signal: AbortSignal, hooks: AgentHooks = {}): AsyncIterable<StreamPart> {
  return tools.length === 0 ? provider.chat(request, signal) : toolLoop(provider, request, tools, signal, hooks);
}

type HeldCall = { id: string; name: string; arguments: string; parts: StreamPart[] };

async function* toolLoop(provider: ChatProvider, request: ChatRequest, tools: AgentTool[], signal: AbortSignal, hooks: AgentHooks): AsyncGenerator<StreamPart> {
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const clientTools = (request.tools ?? []).filter((t) => !byName.has(t.name));
  const clientNames = new Set(clientTools.map((t) => t.name));
  const offered = [...clientTools, ...tools.map((t) => t.definition)];
  const messages: ChatMessage[] = [...request.messages];
  // Summed over the steps; unknown as soon as one step reports none (the run then counts).
  let total: Usage | undefined = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  let cost: number | undefined;
  const finish = (reason: FinishReason): StreamPart => ({ type: 'finish', reason, ...(total ? { usage: total } : {}), ...(cost !== undefined ? { costUsd: cost } : {}) });
  for (let step = 0; step < MAX_STEPS; step++) {
    const calls = new Map<string, HeldCall>();
    const clientCalls = new Map<string, { id: string; name: string; arguments: string }>();
    // What the step said, kept in the conversation the next step sees.
    let text = '';
    let reasoning = '';
    let reason: FinishReason = 'stop';
    const last = step === MAX_STEPS - 1;
    if (step > 0) await hooks.beforeStep?.(messages);
    // The request's own choice for the first step (none, required, a named tool); then the model decides.
    const toolChoice = last ? 'none' : step === 0 ? (request.toolChoice ?? 'auto') : 'auto';
    const stepRequest: ChatRequest = { ...request, messages, tools: offered, toolChoice };
    for await (const p of provider.chat(stepRequest, signal)) {
      switch (p.type) {
        case 'tool-input-start':
          if (byName.has(p.toolName)) calls.set(p.id, { id: p.id, name: p.toolName, arguments: '', parts: [{ ...p, providerExecuted: true }] });
          else if (clientNames.has(p.toolName)) {
            clientCalls.set(p.id, { id: p.id, name: p.toolName, arguments: '' });
            yield p;
          }
          // A call to any other name is dropped.
          break;
        case 'tool-input-delta':
        case 'tool-input-end': {
          const call = calls.get(p.id);
          const client = clientCalls.get(p.id);
          if (p.type === 'tool-input-delta' && (call ?? client)) (call ?? client)!.arguments += p.delta;
          if (call) call.parts.push(p);
          else if (client) yield p;
          break;
        }
        case 'finish':
          reason = p.reason;
          total = p.usage && total ? add(total, p.usage) : undefined;
          if (p.costUsd !== undefined) cost = (cost ?? 0) + p.costUsd;
          break;
        case 'error':
          yield p;
          return;
        case 'text-delta':
          text += p.delta;
          yield p;
          break;
        case 'reasoning-delta':
          reasoning += p.delta;
          yield p;
          break;
        default:
          yield p;
      }
    }
    if (calls.size === 0) {
      yield finish(clientCalls.size > 0 ? 'tool_calls' : reason === 'tool_calls' ? 'stop' : reason);
      return;
    }
    const known = [...calls.values()];
    messages.push({
      role: 'assistant',
      content: text === '' ? null : text,
      ...(reasoning === '' ? {} : { reasoning }),
      tool_calls: known.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    });
    for (const c of known) {
      yield* c.parts;
      const tool = byName.get(c.name)!;
      await hooks.beforeTool?.(tool);
      const out = await tool.run(c.arguments, signal);
      const text = typeof out === 'string' ? out : out.text;
      yield { type: 'tool-result', toolCallId: c.id, toolName: c.name, result: text, ...(typeof out !== 'string' && out.data !== undefined ? { data: out.data } : {}) };
      messages.push({ role: 'tool', tool_call_id: c.id, content: text });
    }
    // A client call ends the response: the caller runs it and continues.
    if (clientCalls.size > 0) {
      yield finish('tool_calls');
      return;
    }
  }
}

const add = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0),
});
