// A remote MCP server's tool as the model sees it (a function named `<label>__<tool>`)
// and as the agent loop runs it (require_approval `never`), or as a pending call the
// caller approves first: either way the call goes through mcp-client.ts, exactly once,
// with exactly the arguments the model gave. What it gave back is an `mcp_call` item's
// output or error.
import type { OutboundGuard } from '../../outbound/guard.ts';
import type { FunctionTool } from '../../providers/types.ts';
import { argumentsObject, type AgentTool, type ToolOutput } from '../types.ts';
import { callMcpTool, McpFailed, type McpServer, type McpToolInfo } from './mcp-client.ts';

/** What one MCP call adds to its `mcp_call` item (the reference's MCPToolCall fields). */
export interface McpCallData {
  kind: 'mcp';
  status: 'completed' | 'failed';
  output: string | null;
  error: Record<string, unknown> | null;
}

/** The function name the model sees for a server's tool: letters, digits, _ and - only, at most 64. */
export function mcpFunctionName(serverLabel: string, tool: string): string {
  return `${serverLabel}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

export function mcpDefinition(server: McpServer, info: McpToolInfo, description?: string): FunctionTool {
  const about = [info.description, description ? `(${server.label}: ${description})` : `(on the MCP server ${server.label})`].filter(Boolean).join(' ');
  return { name: mcpFunctionName(server.label, info.name), description: about.slice(0, 2_000), parameters: info.input_schema as FunctionTool['parameters'] };
}

/** Runs one call: the text the model reads, the item's output or error. A server that cannot be used is an `http_error` or protocol error, not a throw. */
export async function runMcpCall(guard: OutboundGuard, server: McpServer, name: string, argumentsJson: string, signal: AbortSignal): Promise<ToolOutput> {
  try {
    const result = await callMcpTool(guard, server, name, argumentsObject(argumentsJson), { signal });
    if ('output' in result) return { text: result.output, data: { kind: 'mcp', status: 'completed', output: result.output, error: null } satisfies McpCallData };
    return { text: `The tool failed: ${result.error}`, data: { kind: 'mcp', status: 'failed', output: null, error: result.detail } satisfies McpCallData };
  } catch (err) {
    if (signal.aborted) throw err;
    const message = err instanceof McpFailed ? err.message : `The MCP server '${server.label}' could not be used.`;
    const error = err instanceof McpFailed && err.status !== undefined ? { type: 'http_error', code: err.status, message } : { type: 'mcp_protocol_error', code: -32000, message };
    return { text: message, data: { kind: 'mcp', status: 'failed', output: null, error } satisfies McpCallData };
  }
}

/** A tool that runs without approval, as a service tool of the agent loop. */
/** Calls of one MCP tool an answer may make (past it the model is told to answer). */
export const MCP_MAX_USES = 20;

export function mcpAgentTool(guard: OutboundGuard, server: McpServer, info: McpToolInfo, description?: string): AgentTool {
  return {
    definition: mcpDefinition(server, info, description),
    maxUses: MCP_MAX_USES,
    run: (argumentsJson, signal) => runMcpCall(guard, server, info.name, argumentsJson, signal),
  };
}
