// The assistant's own tool loop (SPEC "What the service does" item 7), one for every
// surface (chat, Responses, batch lines, background runs): without client tools, a
// format or logprobs, the model may call the service's tools (web search, pages...)
// before answering. The tool registry (tools/registry.ts) decides which tools a key and
// a request get; a request's hosted tools (Responses file_search, code_interpreter,
// web_search) are service tools too, and run beside the request's client tools.
import type { ChatMessage, ChatProvider, ChatRequest, FinishReason, StreamPart, ToolCall, Usage } from '../providers/types.ts';
import type { AgentTool, ToolOutput } from '../tools/types.ts';

/** How long the loop may go on: past either, the next step must answer (no tools). */
export interface AgentLimits {
  maxSteps: number;
  /** Wall time from the loop's start (ms). */
  deadlineMs: number;
}

export const DEFAULT_AGENT_LIMITS: AgentLimits = { maxSteps: 8, deadlineMs: 120_000 };

/**
 * A surface that can pause a turn (the messages surface's `pause_turn`) and continue it
 * in a later request.
 */
export interface AgentTurn {
  /**
   * At the step limit (or past the deadline) the last step is still offered the tools;
   * service calls it makes are passed on but not run, and the loop finishes `paused`
   * (reason `tool_calls`). Off: the last step must answer without tools.
   */
  pauseAtLimit?: boolean;
  /**
   * Service calls a paused turn left without results, held by the conversation's last
   * (assistant) message: they run first, before any step, as that step's calls would.
   */
  pending?: readonly ToolCall[];
}

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
 * With no service tools there is one step: the model's own stream, unwrapped. `turn`
 * lets a surface pause at the limit and continue a paused turn (AgentTurn).
 */
export function runAgent(
  provider: ChatProvider,
  request: ChatRequest,
  tools: AgentTool[],
  signal: AbortSignal,
  hooks: AgentHooks = {},
  limits: AgentLimits = DEFAULT_AGENT_LIMITS,
  turn: AgentTurn = {},
): AsyncIterable<StreamPart> {
  return tools.length === 0 ? provider.chat(request, signal) : toolLoop(provider, request, tools, signal, hooks, limits, turn);
}

type HeldCall = { id: string; name: string; arguments: string; parts: StreamPart[] };

async function* toolLoop(provider: ChatProvider, request: ChatRequest, tools: AgentTool[], signal: AbortSignal, hooks: AgentHooks, limits: AgentLimits, turn: AgentTurn): AsyncGenerator<StreamPart> {
  const deadline = Date.now() + limits.deadlineMs;
  const uses = new Map<AgentTool, number>();
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const clientTools = (request.tools ?? []).filter((t) => !byName.has(t.name));
  const clientNames = new Set(clientTools.map((t) => t.name));
  const offered = [...clientTools, ...tools.map((t) => t.definition)];
  const messages: ChatMessage[] = [...request.messages];
  // Summed over the steps; unknown as soon as one step reports none (the run then counts).
  let total: Usage | undefined = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  let cost: number | undefined;
  const finish = (reason: FinishReason, paused = false): StreamPart => ({
    type: 'finish',
    reason,
    ...(paused ? { paused: true } : {}),
    ...(total ? { usage: total } : {}),
    ...(cost !== undefined ? { costUsd: cost } : {}),
  });
  /** Runs one service call (within its tool's max uses, its fee charged first) and keeps its result in the conversation. */
  async function* runCall(c: { id: string; name: string; arguments: string }): AsyncGenerator<StreamPart> {
    const tool = byName.get(c.name)!;
    const used = uses.get(tool) ?? 0;
    let out: string | ToolOutput;
    if (tool.maxUses !== undefined && used >= tool.maxUses) {
      // Past its cap the tool does not run (and costs nothing): the model is told.
      out = `${c.name} may be used at most ${tool.maxUses} times in one answer: answer with what you have.`;
    } else {
      uses.set(tool, used + 1);
      await hooks.beforeTool?.(tool);
      // The deadline bounds the tool's run too: past it the tool stops and the model is told.
      const toolSignal = AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))]);
      try {
        out = await tool.run(c.arguments, toolSignal);
      } catch (err) {
        if (signal.aborted || !toolSignal.aborted) throw err;
        out = `${c.name} did not finish within the time this answer may take: answer with what you have.`;
      }
    }
    const text = typeof out === 'string' ? out : out.text;
    yield { type: 'tool-result', toolCallId: c.id, toolName: c.name, result: text, ...(typeof out !== 'string' && out.data !== undefined ? { data: out.data } : {}) };
    messages.push({ role: 'tool', tool_call_id: c.id, content: text });
  }
  // A paused turn's calls first: the client already shows them, so only their results go out.
  for (const c of turn.pending ?? []) if (byName.has(c.name)) yield* runCall(c);
  for (let step = 0; step < limits.maxSteps; step++) {
    const calls = new Map<string, HeldCall>();
    const clientCalls = new Map<string, { id: string; name: string; arguments: string }>();
    // What the step said, kept in the conversation the next step sees.
    let text = '';
    let reasoning = '';
    let reason: FinishReason = 'stop';
    // The last step allowed, or the time is up: the model answers with what it has.
    const last = step === limits.maxSteps - 1 || Date.now() >= deadline;
    if (step > 0) await hooks.beforeStep?.(messages);
    // The request's own choice for the first step (none, required, a named tool); then the model decides.
    const toolChoice = last && !turn.pauseAtLimit ? 'none' : step === 0 ? (request.toolChoice ?? 'auto') : 'auto';
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
    // Still wanting service tools at the limit: the turn pauses, its calls shown but not run (the caller continues it).
    if (last && turn.pauseAtLimit && clientCalls.size === 0) {
      for (const c of known) yield* c.parts;
      yield finish('tool_calls', true);
      return;
    }
    messages.push({
      role: 'assistant',
      content: text === '' ? null : text,
      ...(reasoning === '' ? {} : { reasoning }),
      tool_calls: known.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    });
    for (const c of known) {
      yield* c.parts;
      yield* runCall(c);
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
