// Responses tools → the provider's function tools, and the provider's calls back into
// Responses items. Every client-run tool (function, custom, namespace members, local
// shell, computer, apply_patch) reaches the model as a function with a JSON schema, so
// the offline engine and any OpenAI-compatible upstream can call it; the call is turned
// back into the item type the client expects (`function_call`, `custom_tool_call`,
// `shell_call`, `computer_call`, `apply_patch_call`). Web search with no search backend
// is never offered to the model. file_search, code_interpreter and a container shell
// are hosted tools the service runs (file-search.ts, container-tools.ts): no client
// function, they come back as `file_search_call`, `code_interpreter_call` and
// `shell_call` + `shell_call_output`.
import { RESPONSE_TOOL_SWITCHES } from '../../contract/endpoints/responses-tools.ts';
import { invalidRequest, modelNotAllowed, unsupportedParameter } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { FunctionTool, ToolChoice } from '../../providers/types.ts';
import { CODE_INTERPRETER_FUNCTION_NAME, SHELL_FUNCTION_NAME } from '../../tools/containers/container-tool.ts';
import type { ContainerToolSpecs } from './container-tools.ts';
import type { McpSpec } from './mcp-servers.ts';
import { FILE_SEARCH_FUNCTION_NAME } from '../../tools/file-search/file-search-tool.ts';
import { argumentsObject } from '../../tools/types.ts';
import { WEB_FUNCTION_NAMES } from '../../tools/web-search/web-tools.ts';
import { IMAGE_GENERATION_FUNCTION_NAME } from '../../tools/images/image-generation-tool.ts';
import { newItemId, type Item } from './items.ts';

export type ToolKind =
  | { kind: 'function'; name: string; namespace?: string }
  | { kind: 'custom'; name: string; namespace?: string }
  | { kind: 'shell' }
  | { kind: 'computer'; preview: boolean }
  | { kind: 'apply_patch' }
  /** Hosted tools the service runs (service tools of the agent loop). */
  | { kind: 'file_search' }
  /** The container is settled before the model runs (container-tools.ts `resolveContainers`). */
  | { kind: 'code_interpreter'; containerId: string }
  /** `shell` with a container environment: bash in the sandbox, run by the service. */
  | { kind: 'container_shell'; containerId: string }
  /** A web call (web_search, open_page, find_in_page): a `web_search_call` item. */
  | { kind: 'web_search' }
  /** The image_generation tool (a request's, or the assistant's own): an `image_generation_call` item. */
  | { kind: 'image_generation' }
  /** A remote MCP tool that runs without approval: an `mcp_call` item. */
  | { kind: 'mcp'; serverLabel: string; name: string }
  /** A remote MCP tool that needs approval: its call ends the response as an `mcp_approval_request`. */
  | { kind: 'mcp_approval'; serverLabel: string; name: string };

export interface MappedTools {
  functions: FunctionTool[];
  /** By the name the provider sees. */
  kinds: Map<string, ToolKind>;
  toolChoice?: ToolChoice;
  /** The request's web_search tool and where it is (`tools[1]`). */
  webSearch?: { tool: RawTool; at: string };
  /** The request's file_search tool and where it is (`tools[2]`). */
  fileSearch?: { tool: RawTool; at: string };
  /** The request's image_generation tool and where it is (`tools[3]`). */
  imageGeneration?: { tool: RawTool; at: string };
  /** The request's code_interpreter and container shell tools. */
  containerTools: ContainerToolSpecs;
  /** The request's remote MCP servers (mcp-servers.ts settles them). */
  mcp: McpSpec[];
}

/** `shell` runs on the caller's side with environment local, or none given (as the reference's shell tool began). */
const isLocalShell = (t: RawTool) => t.environment == null || t.environment.type === 'local';

const SHELL_FUNCTION: FunctionTool = {
  name: 'shell',
  description: "Runs shell commands on the user's machine and returns their output.",
  parameters: {
    type: 'object',
    properties: {
      commands: { type: 'array', items: { type: 'string' }, description: 'commands to run, in order' },
      timeout_ms: { type: 'integer' },
      max_output_length: { type: 'integer' },
    },
    required: ['commands'],
  },
};

const APPLY_PATCH_FUNCTION: FunctionTool = {
  name: 'apply_patch',
  description: 'Creates, updates or deletes a file. diff is a V4A diff (not needed to delete).',
  parameters: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'] },
      path: { type: 'string' },
      diff: { type: 'string' },
    },
    required: ['type', 'path'],
  },
};

const COMPUTER_ACTIONS = ['click', 'double_click', 'drag', 'move', 'scroll', 'keypress', 'type', 'wait', 'screenshot'];
const COMPUTER_FUNCTION: FunctionTool = {
  name: 'computer',
  description: "Operates the user's screen: the actions run in order and a screenshot comes back.",
  parameters: {
    type: 'object',
    properties: {
      actions: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: COMPUTER_ACTIONS },
            x: { type: 'integer' },
            y: { type: 'integer' },
            text: { type: 'string' },
            keys: { type: 'array', items: { type: 'string' } },
            button: { type: 'string' },
            scroll_x: { type: 'integer' },
            scroll_y: { type: 'integer' },
          },
          required: ['type'],
        },
      },
    },
    required: ['actions'],
  },
};

type RawTool = Record<string, any>;

function customFunction(t: RawTool, name: string): FunctionTool {
  const grammar = t.format?.type === 'grammar' ? `Input follows this ${t.format.syntax} grammar:\n${String(t.format.definition).slice(0, 4000)}` : 'Free-form text.';
  return {
    name,
    ...(t.description ? { description: t.description } : {}),
    parameters: { type: 'object', properties: { input: { type: 'string', description: grammar } }, required: ['input'], additionalProperties: false },
  };
}

function functionOf(t: RawTool, name: string): FunctionTool {
  return {
    name,
    ...(t.description ? { description: t.description } : {}),
    ...(t.parameters ? { parameters: t.parameters } : {}),
    ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}),
  };
}

/**
 * The switch table's entry for a tool, or a refusal naming it. `unavailable`: hosted
 * tools this service cannot run (no backend configured), refused as not offered.
 */
function admitTool(t: RawTool, at: string, key: KeyRecord, unavailable: ReadonlySet<string>): void {
  const type = t.type === 'shell' && isLocalShell(t) ? 'shell/local' : String(t.type);
  const entry = RESPONSE_TOOL_SWITCHES[type];
  if (!entry) throw unsupportedParameter(`${at}.type`, `The tool type '${t.type}' is not offered.`);
  if (!entry.offered) throw unsupportedParameter(`${at}.type`, `The ${t.type} tool is not offered yet.`);
  if (unavailable.has(type)) throw unsupportedParameter(`${at}.type`, `The ${t.type} tool is not offered: this service has no backend configured for it.`);
  if (entry.permission && !key.permissions[entry.permission]) {
    throw modelNotAllowed(`This API key does not have the '${entry.permission}' permission, which the ${t.type} tool needs.`, `${at}.type`);
  }
}

export function mapTools(tools: readonly RawTool[] | null | undefined, choice: unknown, key: KeyRecord, unavailable: ReadonlySet<string> = new Set()): MappedTools {
  const functions: FunctionTool[] = [];
  const kinds = new Map<string, ToolKind>();
  let webSearch: MappedTools['webSearch'];
  let fileSearch: MappedTools['fileSearch'];
  let imageGeneration: MappedTools['imageGeneration'];
  const containerTools: ContainerToolSpecs = {};
  const mcp: McpSpec[] = [];
  /** A hosted tool's function name, taken once. */
  const hosted = (name: string, kind: ToolKind, at: string, what: string) => {
    if (kinds.get(name)?.kind === kind.kind) throw invalidRequest(`Send one ${what} tool.`, at);
    if (kinds.has(name)) throw invalidRequest(`Two tools are named '${name}'.`, at);
    kinds.set(name, kind);
  };
  const add = (f: FunctionTool, kind: ToolKind, at: string) => {
    if (kinds.has(f.name)) throw invalidRequest(`Two tools are named '${f.name}'.`, at);
    functions.push(f);
    kinds.set(f.name, kind);
  };
  (tools ?? []).forEach((t, i) => {
    const at = `tools[${i}]`;
    admitTool(t, at, key, unavailable);
    switch (t.type) {
      case 'function':
        add(functionOf(t, t.name), { kind: 'function', name: t.name }, `${at}.name`);
        break;
      case 'custom':
        add(customFunction(t, t.name), { kind: 'custom', name: t.name }, `${at}.name`);
        break;
      case 'namespace':
        (t.tools as RawTool[]).forEach((m, j) => {
          // The model sees one flat list; the namespace comes back on the call item.
          const flat = `${t.name}__${m.name}`;
          const kind: ToolKind = m.type === 'custom' ? { kind: 'custom', name: m.name, namespace: t.name } : { kind: 'function', name: m.name, namespace: t.name };
          add(m.type === 'custom' ? customFunction(m, flat) : functionOf(m, flat), kind, `${at}.tools[${j}].name`);
        });
        break;
      case 'shell':
        if (isLocalShell(t)) add(SHELL_FUNCTION, { kind: 'shell' }, at);
        else {
          hosted(SHELL_FUNCTION_NAME, { kind: 'container_shell', containerId: '' }, at, 'shell');
          containerTools.shell = { tool: t, at };
        }
        break;
      case 'code_interpreter':
        hosted(CODE_INTERPRETER_FUNCTION_NAME, { kind: 'code_interpreter', containerId: '' }, at, 'code_interpreter');
        containerTools.codeInterpreter = { tool: t, at };
        break;
      case 'computer':
      case 'computer_use_preview':
        add(COMPUTER_FUNCTION, { kind: 'computer', preview: t.type === 'computer_use_preview' }, at);
        break;
      case 'apply_patch':
        add(APPLY_PATCH_FUNCTION, { kind: 'apply_patch' }, at);
        break;
      case 'file_search':
        if (fileSearch) throw invalidRequest('Send one file_search tool: list every vector store in its vector_store_ids.', at);
        if (kinds.has(FILE_SEARCH_FUNCTION_NAME)) throw invalidRequest(`Two tools are named '${FILE_SEARCH_FUNCTION_NAME}'.`, at);
        kinds.set(FILE_SEARCH_FUNCTION_NAME, { kind: 'file_search' });
        fileSearch = { tool: t, at };
        break;
      case 'mcp':
        mcp.push({ tool: t, at });
        break;
      case 'image_generation':
        // Limited members (the image endpoints' rows): one value each; another is refused naming it.
        for (const [member, allowed] of [['background', 'auto'], ['moderation', 'auto'], ['partial_images', 0]] as const) {
          if (t[member] !== undefined && t[member] !== null && t[member] !== allowed) throw unsupportedParameter(`${at}.${member}`, `The image_generation tool's ${member} takes only ${JSON.stringify(allowed)}.`);
        }
        if (t.action === 'edit') throw unsupportedParameter(`${at}.action`, 'The image_generation tool makes new images: action edit is not offered (use POST /v1/images/edits).');
        hosted(IMAGE_GENERATION_FUNCTION_NAME, { kind: 'image_generation' }, at, 'image_generation');
        imageGeneration = { tool: t, at };
        break;
      default:
        // web search (its four type names): the registry's web tools, or a note that it cannot search.
        if (webSearch) throw invalidRequest('Send one web_search tool.', at);
        for (const name of WEB_FUNCTION_NAMES) hosted(name, { kind: 'web_search' }, at, 'web_search');
        webSearch = { tool: t, at };
    }
  });
  return { functions, kinds, ...(webSearch ? { webSearch } : {}), ...(fileSearch ? { fileSearch } : {}), ...(imageGeneration ? { imageGeneration } : {}), containerTools, mcp, ...mapChoice(choice, kinds) };
}

function mapChoice(choice: unknown, kinds: Map<string, ToolKind>): { toolChoice?: ToolChoice } {
  if (choice === undefined || choice === null) return {};
  if (typeof choice === 'string') {
    if (choice !== 'none' && kinds.size === 0) return {};
    return { toolChoice: choice as ToolChoice };
  }
  const c = choice as { type: string; name?: string };
  if (c.type === 'function' || c.type === 'custom') {
    const name = [...kinds].find(([, k]) => (k.kind === 'function' || k.kind === 'custom') && k.name === c.name && !k.namespace)?.[0] ?? [...kinds].find(([, k]) => 'name' in k && k.name === c.name)?.[0];
    if (!name) throw invalidRequest(`The tool '${c.name}' named in tool_choice is not among the tools.`, 'tool_choice');
    return { toolChoice: { name } };
  }
  const hosted: Record<string, string> = { shell: 'shell', code_interpreter: CODE_INTERPRETER_FUNCTION_NAME, apply_patch: 'apply_patch', computer: 'computer', computer_use: 'computer', computer_use_preview: 'computer', file_search: FILE_SEARCH_FUNCTION_NAME, image_generation: IMAGE_GENERATION_FUNCTION_NAME };
  const name = hosted[c.type];
  // Any other hosted tool choice is treated as auto (SPEC).
  return name && kinds.has(name) ? { toolChoice: { name } } : kinds.size ? { toolChoice: 'auto' } : {};
}

const parse = argumentsObject;

/** A finished provider tool call as the Responses item its tool's kind produces. */
export function callItem(kind: ToolKind | undefined, providerName: string, callId: string, args: string, status: 'completed' | 'incomplete' = 'completed'): Item {
  switch (kind?.kind) {
    case 'custom': {
      const input = parse(args).input;
      return {
        type: 'custom_tool_call',
        id: newItemId('custom_tool_call'),
        call_id: callId,
        ...(kind.namespace ? { namespace: kind.namespace } : {}),
        name: kind.name,
        input: typeof input === 'string' ? input : args,
        status,
      };
    }
    case 'shell': {
      const a = parse(args);
      const commands = Array.isArray(a.commands) ? a.commands.filter((c: unknown) => typeof c === 'string') : [];
      return {
        type: 'shell_call',
        id: newItemId('shell_call'),
        call_id: callId,
        action: { commands, timeout_ms: Number.isInteger(a.timeout_ms) ? a.timeout_ms : null, max_output_length: Number.isInteger(a.max_output_length) ? a.max_output_length : null },
        status,
        environment: { type: 'local' },
      };
    }
    case 'computer': {
      const actions = (Array.isArray(parse(args).actions) ? parse(args).actions : []).filter((x: any) => x && COMPUTER_ACTIONS.includes(x.type));
      const list = actions.length ? actions : [{ type: 'screenshot' }];
      return {
        type: 'computer_call',
        id: newItemId('computer_call'),
        call_id: callId,
        ...(kind.preview ? { action: list[0] } : { actions: list }),
        pending_safety_checks: [],
        status,
      };
    }
    case 'mcp_approval':
      return { type: 'mcp_approval_request', id: newItemId('mcp_approval_request'), server_label: kind.serverLabel, name: kind.name, arguments: args };
    case 'apply_patch': {
      const a = parse(args);
      const type = ['create_file', 'update_file', 'delete_file'].includes(a.type) ? a.type : 'update_file';
      const operation = { type, path: typeof a.path === 'string' ? a.path : '', ...(type === 'delete_file' ? {} : { diff: typeof a.diff === 'string' ? a.diff : '' }) };
      return { type: 'apply_patch_call', id: newItemId('apply_patch_call'), call_id: callId, status: status === 'incomplete' ? 'in_progress' : 'completed', operation };
    }
    default: {
      const name = kind?.kind === 'function' ? kind.name : providerName;
      const namespace = kind?.kind === 'function' ? kind.namespace : undefined;
      return { type: 'function_call', id: newItemId('function_call'), call_id: callId, ...(namespace ? { namespace } : {}), name, arguments: args, status };
    }
  }
}

/** The provider-side name and arguments of a client tool call item sent back as input. */
export function providerCall(item: Record<string, any>): { name: string; arguments: string } | null {
  const flat = (name: string, ns: unknown) => (typeof ns === 'string' && ns ? `${ns}__${name}` : name);
  switch (item.type) {
    case 'function_call':
      return { name: flat(item.name, item.namespace), arguments: item.arguments };
    case 'custom_tool_call':
      return { name: flat(item.name, item.namespace), arguments: JSON.stringify({ input: item.input }) };
    case 'shell_call':
      return { name: 'shell', arguments: JSON.stringify(item.action ?? {}) };
    case 'computer_call':
      return { name: 'computer', arguments: JSON.stringify({ actions: item.actions ?? (item.action ? [item.action] : []) }) };
    case 'apply_patch_call':
      return { name: 'apply_patch', arguments: JSON.stringify(item.operation ?? {}) };
    default:
      return null;
  }
}
