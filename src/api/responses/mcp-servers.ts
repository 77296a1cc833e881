// The Responses `mcp` tool (SPEC "Hosted tools in /responses", "Approval-driven and
// client-run tool flows"): a request's remote MCP servers, settled before the model runs.
// Each server's address is checked by the outbound guard (refused: 400, nothing runs);
// its tools are listed once (an `mcp_list_tools` item, reused along a previous_response_id
// chain while the chain has one for that label) and filtered by `allowed_tools`. A tool
// that needs approval is offered to the model like a client tool: the loop ends at its
// call, which becomes an `mcp_approval_request` item, kept with the stored response; that
// is the paused state, in the database every instance shares. The caller answers with an
// `mcp_approval_response` and previous_response_id: an approved call runs here, exactly
// once, with exactly the arguments stored, before the model continues (the model is not
// asked again); a declined one runs nothing and the model is told. A tool with approval
// `never` is a service tool of the agent loop (an `mcp_call` item as it runs).
// The server's `headers` and `authorization` live only in this request: they go to that
// server, never into an item, the echoed tools, a job row, a log or an error text.
import type { Kysely } from 'kysely';
import { invalidRequest } from '../../errors.ts';
import type { Database } from '../../store/schema.ts';
import { isUniqueViolation } from '../../store/errors.ts';
import { OutboundRefused } from '../../outbound/guard.ts';
import type { FunctionTool } from '../../providers/types.ts';
import { McpFailed, type McpServer, type McpToolInfo } from '../../tools/mcp/mcp-client.ts';
import { mcpDefinition, mcpFunctionName, type McpCallData } from '../../tools/mcp/mcp-tool.ts';
import { isAllowed, needsApproval, type AllowedTools, type RequireApproval } from '../../tools/mcp/tool-filter.ts';
import type { ToolRegistry } from '../../tools/registry.ts';
import type { AgentTool } from '../../tools/types.ts';
import { newItemId, type Item } from './items.ts';
import type { ToolKind } from './tool-mapping.ts';

type RawTool = Record<string, any>;

/** A request's mcp tool entry and where it is (`tools[2]`). */
export interface McpSpec {
  tool: RawTool;
  at: string;
}

/** An approved call to run before the model continues. */
export interface ApprovedCall {
  request: Item;
  server: McpServer;
}

export interface McpPlan {
  /** The `mcp_list_tools` items this response adds (before anything the model says). */
  listItems: Item[];
  /** Tools that run without approval: service tools of the agent loop. */
  tools: AgentTool[];
  /** Tools that need approval: offered like client tools; a call ends the response. */
  functions: FunctionTool[];
  /** Function name → kind, for the output items. */
  kinds: [string, ToolKind][];
  /** Approvals this request's input grants, run once the run is open. */
  approved: ApprovedCall[];
  /** Every approval request this input answers (approved or not): claimed once for the whole service before anything runs. */
  answered: { id: string; approve: boolean }[];
}

/** The server as the client reaches it: its secrets from this request only. */
function serverOf(t: RawTool): McpServer {
  return {
    label: String(t.server_label),
    url: String(t.server_url),
    ...(t.headers ? { headers: t.headers as Record<string, string> } : {}),
    ...(typeof t.authorization === 'string' ? { authorization: t.authorization } : {}),
  };
}

/** The tools a listing item shows (the reference's MCPListToolsTool). */
const listed = (tools: readonly McpToolInfo[]) => tools.map((t) => ({ name: t.name, description: t.description ?? null, input_schema: t.input_schema, annotations: t.annotations ?? null }));

/** The latest listing of a label in the earlier items that did not fail. */
function earlierListing(earlier: readonly Item[], label: string): McpToolInfo[] | undefined {
  for (let i = earlier.length - 1; i >= 0; i--) {
    const item = earlier[i]!;
    if (item.type === 'mcp_list_tools' && item.server_label === label && !item.error && Array.isArray(item.tools)) {
      return (item.tools as Record<string, any>[]).map((t) => ({ name: String(t.name), ...(typeof t.description === 'string' ? { description: t.description } : {}), input_schema: t.input_schema ?? { type: 'object' }, annotations: t.annotations ?? null }));
    }
  }
  return undefined;
}

/** Approval request ids already answered in these items (a response to it, or the call it ran). */
export function answeredApprovals(items: readonly Item[]): Set<string> {
  const out = new Set<string>();
  for (const item of items) {
    if (item.type === 'mcp_approval_response' && typeof item.approval_request_id === 'string') out.add(item.approval_request_id);
    if (item.type === 'mcp_call' && typeof item.approval_request_id === 'string') out.add(item.approval_request_id);
  }
  return out;
}

/**
 * Settles a request's MCP servers before the model runs: addresses checked, tools listed
 * (or reused), filtered and split by approval; the input's approval answers checked
 * against the stored requests of the chain (unknown, another account's, or already
 * answered: 400).
 */
export async function planMcp(registry: ToolRegistry, specs: readonly McpSpec[], earlier: readonly Item[], input: readonly Item[], signal: AbortSignal, list = true): Promise<McpPlan> {
  const plan: McpPlan = { listItems: [], tools: [], functions: [], kinds: [], approved: [], answered: [] };
  const servers = new Map<string, McpServer>();
  for (const { tool, at } of specs) {
    const label = String(tool.server_label);
    if (servers.has(label)) throw invalidRequest(`Two mcp tools have the server_label '${label}'.`, `${at}.server_label`);
    try {
      await registry.checkMcpServer(String(tool.server_url));
    } catch (err) {
      if (err instanceof OutboundRefused) throw invalidRequest(`The MCP server_url cannot be used: ${err.message}`, `${at}.server_url`);
      throw err;
    }
    servers.set(label, serverOf(tool));
  }
  checkApprovals(servers, new Map(specs.map(({ tool }) => [String(tool.server_label), tool])), earlier, input, plan);
  if (!list) return plan;

  for (const { tool } of specs) {
    const server = servers.get(String(tool.server_label))!;
    let found = earlierListing(earlier, server.label);
    if (!found) {
      const item: Item = { id: newItemId('mcp_list_tools'), type: 'mcp_list_tools', server_label: server.label, tools: [], error: null };
      try {
        found = await registry.listMcp(server, signal);
        item.tools = listed(found.filter((t) => isAllowed(t, tool.allowed_tools as AllowedTools)));
      } catch (err) {
        if (!(err instanceof McpFailed)) throw err;
        // The model goes on without this server's tools; the item says why.
        item.error = err.message;
        found = [];
      }
      plan.listItems.push(item);
    }
    for (const info of found.filter((t) => isAllowed(t, tool.allowed_tools as AllowedTools))) {
      const name = mcpFunctionName(server.label, info.name);
      if (plan.kinds.some(([n]) => n === name)) continue;
      const description = typeof tool.server_description === 'string' ? tool.server_description : undefined;
      if (needsApproval(info, tool.require_approval as RequireApproval)) {
        plan.functions.push(mcpDefinition(server, info, description));
        plan.kinds.push([name, { kind: 'mcp_approval', serverLabel: server.label, name: info.name }]);
      } else {
        plan.tools.push(registry.mcp(server, info, description));
        plan.kinds.push([name, { kind: 'mcp', serverLabel: server.label, name: info.name }]);
      }
    }
  }
  return plan;
}

function checkApprovals(servers: Map<string, McpServer>, specs: ReadonlyMap<string, RawTool>, earlier: readonly Item[], input: readonly Item[], plan: McpPlan): void {
  const requests = new Map(earlier.filter((i) => i.type === 'mcp_approval_request').map((i) => [i.id, i]));
  const answered = answeredApprovals(earlier);
  input.forEach((item, j) => {
    if (item.type !== 'mcp_approval_response') return;
    const param = `input[${j}].approval_request_id`;
    const id = String(item.approval_request_id);
    const request = requests.get(id);
    // Another account's request is not in this account's chain: it looks unknown.
    if (!request) throw invalidRequest(`No mcp_approval_request with id '${id}' is in this response's context: send previous_response_id of the response that asked.`, param);
    if (answered.has(id)) throw invalidRequest(`The mcp_approval_request '${id}' has already been answered.`, param);
    answered.add(id);
    plan.answered.push({ id, approve: item.approve === true });
    if (item.approve !== true) return;
    const server = servers.get(String(request.server_label));
    if (!server) throw invalidRequest(`Send the mcp tool for server_label '${request.server_label}' again (with its headers or authorization) to run the approved call.`, param);
    // The tool must still be one this request allows.
    if (!isAllowed({ name: String(request.name) }, specs.get(server.label)!.allowed_tools as AllowedTools)) {
      throw invalidRequest(`The approved tool '${request.name}' is not among this request's allowed_tools for '${server.label}'.`, param);
    }
    plan.approved.push({ request, server });
  });
}

/**
 * Claims the approval requests this input answers, once for the whole service (a row
 * each, keyed by account and request id, migration 0022), all or none: one already
 * claimed (answered by another request, at once or before, stored or not) is a 400 and
 * nothing runs.
 */
export async function claimApprovals(db: Kysely<Database>, accountId: string, requestId: string, answered: McpPlan['answered']): Promise<void> {
  if (answered.length === 0) return;
  const at = Date.now();
  try {
    await db.transaction().execute(async (trx) => {
      for (const a of answered) {
        await trx.insertInto('mcp_approvals').values({ account_id: accountId, approval_request_id: a.id, approved: a.approve ? 1 : 0, request_id: requestId, created_at: at }).execute();
      }
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw invalidRequest('An mcp_approval_request this input answers has already been answered.', 'input');
  }
}

/** Runs the approved calls, once each, with the arguments stored: their `mcp_call` items. */
export async function runApproved(registry: ToolRegistry, approved: readonly ApprovedCall[], signal: AbortSignal): Promise<Item[]> {
  const out: Item[] = [];
  for (const { request, server } of approved) {
    const args = String(request.arguments);
    const ran = await registry.mcpCall(server, String(request.name), args, signal);
    const data = ran.data as McpCallData;
    out.push({
      id: newItemId('mcp_call'),
      type: 'mcp_call',
      server_label: request.server_label,
      name: request.name,
      arguments: args,
      output: data.output,
      error: data.error,
      status: data.status,
      approval_request_id: request.id,
    });
  }
  return out;
}

/** The tools as the response echoes them: an mcp tool without its headers and authorization. */
export function echoedTools(tools: readonly RawTool[] | null | undefined): RawTool[] {
  return (tools ?? []).map((t) => {
    if (t?.type !== 'mcp' || (t.headers == null && t.authorization == null)) return t;
    const { headers: _h, authorization: _a, ...rest } = t;
    return rest;
  });
}

/** An mcp tool's credentials, by server_label: held in memory only (a background response's). */
export type McpSecrets = Map<string, { headers?: unknown; authorization?: unknown }>;

/** The body without its mcp tools' headers and authorization, and those, by label. */
export function withoutSecrets<T extends { tools?: unknown }>(body: T): { body: T; secrets: McpSecrets } {
  const secrets: McpSecrets = new Map();
  if (!Array.isArray(body.tools)) return { body, secrets };
  const tools = (body.tools as RawTool[]).map((t) => {
    if (t?.type !== 'mcp' || (t.headers == null && t.authorization == null)) return t;
    const { headers, authorization, ...rest } = t;
    secrets.set(String(t.server_label), { ...(headers != null ? { headers } : {}), ...(authorization != null ? { authorization } : {}) });
    return rest;
  });
  return { body: secrets.size > 0 ? { ...body, tools } : body, secrets };
}

/** The body with the credentials put back. */
export function withSecrets<T extends { tools?: unknown }>(body: T, secrets: McpSecrets): T {
  if (!Array.isArray(body.tools) || secrets.size === 0) return body;
  return { ...body, tools: (body.tools as RawTool[]).map((t) => (t?.type === 'mcp' && secrets.has(String(t.server_label)) ? { ...t, ...secrets.get(String(t.server_label)) } : t)) };
}
