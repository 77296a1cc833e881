// Which of an MCP server's tools the model may see (`allowed_tools`) and which need the
// caller's approval before they run (`require_approval`), in the shapes of the Responses
// `mcp` tool (the reference's MCPTool and MCPToolFilter). Pure: no I/O.

/** A tool as listed by the server: only the fields the filters look at. */
export interface FilterableTool {
  name: string;
  annotations?: object | null;
}

/**
 * MCPToolFilter. `tool_names`: the tool is one of them; `read_only`: the tool is (true) or
 * is not (false) annotated read-only. Every field given must hold; a filter without
 * fields matches every tool.
 */
export interface McpToolFilter {
  tool_names?: string[];
  read_only?: boolean;
}

/** MCPTool.allowed_tools: names, a filter, or absent/null for every tool. */
export type AllowedTools = string[] | McpToolFilter | null | undefined;

/** MCPTool.require_approval: absent/null means 'always'. */
export type RequireApproval = 'always' | 'never' | { always?: McpToolFilter; never?: McpToolFilter } | null | undefined;

/** Whether the server annotated the tool read-only (MCP's `readOnlyHint`, a hint the server gives). */
function isReadOnly(tool: FilterableTool): boolean {
  return (tool.annotations as { readOnlyHint?: unknown } | null | undefined)?.readOnlyHint === true;
}

/** Whether a tool matches a filter (see McpToolFilter); no filter matches nothing. */
export function matchesFilter(tool: FilterableTool, filter: McpToolFilter | null | undefined): boolean {
  if (!filter) return false;
  if (filter.tool_names !== undefined && !filter.tool_names.includes(tool.name)) return false;
  if (filter.read_only !== undefined && filter.read_only !== isReadOnly(tool)) return false;
  return true;
}

/** Whether the model may see and call the tool: absent/null allows every tool. */
export function isAllowed(tool: FilterableTool, allowed: AllowedTools): boolean {
  if (allowed == null) return true;
  if (Array.isArray(allowed)) return allowed.includes(tool.name);
  return matchesFilter(tool, allowed);
}

/**
 * Whether a call of the tool waits for an `mcp_approval_response`. The object form: a tool
 * in `never` runs without approval unless it is also in `always` (asking is the safe side);
 * a tool in neither needs approval, as the default is 'always'.
 */
export function needsApproval(tool: FilterableTool, policy: RequireApproval): boolean {
  if (policy == null || policy === 'always') return true;
  if (policy === 'never') return false;
  if (matchesFilter(tool, policy.always)) return true;
  return !matchesFilter(tool, policy.never);
}
