// The assistant's own tool loop (SPEC "What the service does" item 7), one for every
// surface (chat, Responses, batch lines, background runs): without client tools, a
// format or logprobs, the model may call the service's tools (web
// search, pages, images...) before answering. The registry decides which tools a key
// gets; offline none are enabled yet, so the loop answers in one step.
import type { KeyRecord } from '../keys/keys-service.ts';
import type { ChatMessage, ChatProvider, ChatRequest, FinishReason, FunctionTool, StreamPart, Usage } from '../providers/types.ts';

export interface AgentTool {
  definition: FunctionTool;
  run(argumentsJson: string, signal: AbortSignal): Promise<string>;
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
}

/**
 * Runs the conversation, executing service-tool calls between model steps. Text,
 * reasoning and the service tools' inputs (providerExecuted) and results stream
 * through as they come; one finish ends it, with the steps' usage summed. With no
 * service tools there is one step: the model's own stream, unwrapped.
 */
export function runAgent(provider: ChatProvider, request: ChatRequest, tools: AgentTool[], signal: AbortSignal, hooks: AgentHooks = {}): AsyncIterable<StreamPart> {
  return tools.length === 0 ? provider.chat(request, signal) : toolLoop(provider, request, tools, signal, hooks);
}

async function* toolLoop(provider: ChatProvider, request: ChatRequest, tools: AgentTool[], signal: AbortSignal, hooks: AgentHooks): AsyncGenerator<StreamPart> {
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const messages: ChatMessage[] = [...request.messages];
  // Summed over the steps; unknown as soon as one step reports none (the run then counts).
  let total: Usage | undefined = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  let cost: number | undefined;
  for (let step = 0; step < MAX_STEPS; step++) {
    const calls = new Map<string, { id: string; name: string; arguments: string }>();
    let reason: FinishReason = 'stop';
    const last = step === MAX_STEPS - 1;
    if (step > 0) await hooks.beforeStep?.(messages);
    const stepRequest: ChatRequest = { ...request, messages, tools: tools.map((t) => t.definition), toolChoice: last ? 'none' : 'auto' };
    for await (const p of provider.chat(stepRequest, signal)) {
      switch (p.type) {
        case 'tool-input-start':
          // Only the service's own tools are offered here; a call to any other name is dropped.
          if (!byName.has(p.toolName)) break;
          calls.set(p.id, { id: p.id, name: p.toolName, arguments: '' });
          yield { ...p, providerExecuted: true };
          break;
        case 'tool-input-delta':
        case 'tool-input-end': {
          const call = calls.get(p.id);
          if (!call) break;
          if (p.type === 'tool-input-delta') call.arguments += p.delta;
          yield p;
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
        default:
          yield p;
      }
    }
    if (calls.size === 0) {
      yield { type: 'finish', reason: reason === 'tool_calls' ? 'stop' : reason, ...(total ? { usage: total } : {}), ...(cost !== undefined ? { costUsd: cost } : {}) };
      return;
    }
    const known = [...calls.values()];
    messages.push({ role: 'assistant', content: null, tool_calls: known });
    for (const c of known) {
      const result = await byName.get(c.name)!.run(c.arguments, signal);
      yield { type: 'tool-result', toolCallId: c.id, toolName: c.name, result };
      messages.push({ role: 'tool', tool_call_id: c.id, content: result });
    }
  }
}

const add = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0),
});
