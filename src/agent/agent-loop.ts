// The assistant's own tool loop (SPEC "What the service does" item 7), one for every
// surface (chat, Responses, batch lines, background runs): without client tools, a
// format or logprobs, the model may call the service's tools (web
// search, pages, images...) before answering. The registry decides which tools a key
// gets; offline none are enabled yet, so the loop answers in one step.
import type { KeyRecord } from '../keys/keys-service.ts';
import type { ChatMessage, ChatProvider, ChatRequest, FunctionTool, ProviderEvent, Usage } from '../providers/types.ts';

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

/**
 * Runs the conversation, executing service-tool calls between model steps. Text and
 * reasoning stream through as they come; usage is summed into one event at the end.
 * With no service tools there is one step: the model's own stream, unwrapped.
 */
export interface AgentHooks {
  /** Before every step after the first, with the conversation that step sends (the run extends its reservation). */
  beforeStep?(messages: readonly ChatMessage[]): Promise<void>;
}

export function runAgent(provider: ChatProvider, request: ChatRequest, tools: AgentTool[], signal: AbortSignal, hooks: AgentHooks = {}): AsyncIterable<ProviderEvent> {
  return tools.length === 0 ? provider.chat(request, signal) : toolLoop(provider, request, tools, signal, hooks);
}

async function* toolLoop(provider: ChatProvider, request: ChatRequest, tools: AgentTool[], signal: AbortSignal, hooks: AgentHooks): AsyncGenerator<ProviderEvent> {
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const messages: ChatMessage[] = [...request.messages];
  const total: Usage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  for (let step = 0; step < MAX_STEPS; step++) {
    const calls: { id: string; name: string; arguments: string }[] = [];
    let finish: ProviderEvent | null = null;
    const last = step === MAX_STEPS - 1;
    if (step > 0) await hooks.beforeStep?.(messages);
    const stepRequest: ChatRequest = { ...request, messages, tools: tools.map((t) => t.definition), toolChoice: last ? 'none' : 'auto' };
    for await (const e of provider.chat(stepRequest, signal)) {
      if (e.type === 'tool_call') {
        const c = (calls[e.index] ??= { id: '', name: '', arguments: '' });
        if (e.id) c.id = e.id;
        if (e.name) c.name += e.name;
        c.arguments += e.argumentsDelta;
      } else if (e.type === 'usage') {
        total.inputTokens += e.usage.inputTokens;
        total.outputTokens += e.usage.outputTokens;
        total.reasoningTokens! += e.usage.reasoningTokens ?? 0;
      } else if (e.type === 'finish') finish = e;
      else yield e;
    }
    const known = calls.filter((c) => c && byName.has(c.name));
    if (known.length === 0) {
      yield { type: 'usage', usage: total };
      yield finish ?? { type: 'finish', reason: 'stop' };
      return;
    }
    messages.push({ role: 'assistant', content: null, tool_calls: known });
    for (const c of known) messages.push({ role: 'tool', tool_call_id: c.id, content: await byName.get(c.name)!.run(c.arguments, signal) });
  }
}
