// What a service-run tool is to the agent loop (agent/agent-loop.ts): a function the
// model sees, a fee, a use cap, and how it runs. Every surface (chat, Responses, batch
// lines, background runs, the messages surface to come) gets its tools from the one
// registry (registry.ts) and runs them through the one loop.
import type { FunctionTool } from '../providers/types.ts';

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
  /** At most this many calls run in one request; later calls are answered without running (and without a fee). */
  maxUses?: number;
  run(argumentsJson: string, signal: AbortSignal): Promise<string | ToolOutput>;
}

/** A tool call's arguments as an object: {} when they are not a JSON object (a model may send anything). */
export function argumentsObject(json: string): Record<string, any> {
  try {
    const v: unknown = JSON.parse(json);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {};
  } catch {
    return {};
  }
}
