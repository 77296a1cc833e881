// The one registry of service-run tools, for every surface (chat, Responses, batch
// lines, background runs, the messages surface to come). Each tool is declared once
// here: the function the model sees (its module), the key switch it needs, its fee and
// use cap, and how it runs. A surface asks for the tools a request may use and hands
// them to the one agent loop (agent/agent-loop.ts), which charges each fee as a run of
// its own before the tool runs and stops everything on abort.
//
// Two kinds: the assistant's own tools (SPEC "What the service does" item 7: web search
// when a backend is configured, pages through the outbound guard), given when the key's
// agent tools switch is on and the model would not answer directly; and a request's
// hosted tools (Responses `file_search`, `code_interpreter`, a container's `shell`,
// `web_search`), built from the request's tool entry once the surface has checked it.
import type { KeyRecord } from '../keys/keys-service.ts';
import type { Permission } from '../keys/permissions.ts';
import type { OutboundGuard } from '../outbound/guard.ts';
import type { ChatMessage } from '../providers/types.ts';
import type { VectorSearch } from '../retrieval/search-types.ts';
import { codeInterpreterTool } from './containers/code-interpreter-tool.ts';
import type { ContainerLease, ContainerRunner, ContainerToolLog } from './containers/container-tool.ts';
import { containerShellTool } from './containers/shell-tool.ts';
import { bashCodeExecutionTool, textEditorCodeExecutionTool } from './containers/code-execution-tools.ts';
import { fileSearchTool, type FileSearchConfig } from './file-search/file-search-tool.ts';
import { listMcpTools, type McpServer, type McpToolInfo } from './mcp/mcp-client.ts';
import { mcpAgentTool, runMcpCall } from './mcp/mcp-tool.ts';
import type { AgentTool, ToolOutput } from './types.ts';
import { imageGenerationTool, type ImageToolConfig } from './images/image-generation-tool.ts';
import type { ImageProvider, ImageQuality } from '../providers/types.ts';
import type { SearchBackend, UserLocation } from './web-search/backends.ts';
import { CANNOT_SEARCH, webTools, type ContextSize } from './web-search/web-tools.ts';

/** The tools a request gets, and what the model is told beside them (e.g. that it cannot search). */
export interface ToolSet {
  tools: AgentTool[];
  notes: string[];
}

/**
 * The switch the assistant's own tools need. A request's hosted tools need the switches
 * the contract gives their types (RESPONSE_TOOL_SWITCHES), checked when the request is.
 */
const ASSISTANT_SWITCH: Permission = 'agent_tools';

/** Whether a text names a web address (cheap: a substring search, linear in the text). */
const hasUrl = (text: string): boolean => text.includes('https://') || text.includes('http://');

/** Whether the conversation's texts name a web address (a page the assistant could open). */
export function mentionsUrl(messages: readonly ChatMessage[]): boolean {
  for (const m of messages) {
    const c = m.content;
    if (typeof c === 'string' ? hasUrl(c) : Array.isArray(c) && c.some((p) => p.type === 'text' && hasUrl(p.text))) return true;
  }
  return false;
}

export interface ToolPrices {
  /** Per search (USD); OpenAI's web search is $10 a thousand calls. */
  webSearchUsd: number;
  /** Per page opened or searched (USD). */
  pageUsd: number;
}

export interface ToolRegistryDeps {
  outbound: OutboundGuard;
  webSearch: SearchBackend | null;
  prices: ToolPrices;
  /** The vector stores' search (file_search), where configured. */
  vectorSearch?: VectorSearch;
  /** Runs programs in containers (code_interpreter, shell), where configured. */
  containers?: ContainerRunner;
  sandboxTimeoutMs: number;
  /** At most this many calls of each web tool in one request. */
  webMaxUses: number;
  /** The image engine and its price per image (image_generation), where configured. */
  images?: { engine: ImageProvider; priceUsd(quality: ImageQuality, width: number, height: number): number };
  /** Replaces the assistant's own tools (tests give a key tools of their own). */
  assistant?: (key: KeyRecord) => AgentTool[];
}

/** A Responses `web_search` tool entry, as the contract checked it. */
export interface WebSearchEntry {
  allowedDomains: readonly string[];
  userLocation?: UserLocation;
  contextSize: ContextSize;
  /** false: no outgoing request at all (the model is told it cannot search). */
  externalWebAccess: boolean;
}

export class ToolRegistry {
  constructor(private readonly deps: ToolRegistryDeps) {}

  /** The vector search and container runner, once the app has made them (after the chat routes). */
  provide(more: Pick<ToolRegistryDeps, 'vectorSearch' | 'containers' | 'images'>): void {
    Object.assign(this.deps, more);
  }

  /** Whether a search backend is configured (a hosted web_search can search). */
  get canSearch(): boolean {
    return this.deps.webSearch !== null;
  }

  get vectorSearch(): VectorSearch | undefined {
    return this.deps.vectorSearch;
  }

  /**
   * The assistant's own tools for a key: none without the agent tools switch. Without a
   * search backend there is only a page to open, and only when the conversation names an
   * address (`mentionsUrl`): otherwise the model answers directly, paying for no tool
   * definitions and no loop. Nothing is said about search here: a model asked to look
   * something up without a search tool says it cannot.
   */
  assistant(key: KeyRecord, mentionsUrl: boolean, log?: ContainerToolLog, opts: { asksForPicture?: boolean } = {}): ToolSet {
    if (!key.permissions[ASSISTANT_SWITCH]) return { tools: [], notes: [] };
    if (this.deps.assistant) return { tools: this.deps.assistant(key), notes: [] };
    // Pictures: on a surface that shows them (Responses), for a key with the Image generation switch, when asked for one.
    const images = opts.asksForPicture && key.permissions.image_generation && this.deps.images ? [this.imageGeneration({ size: 'auto', quality: 'standard', fields: {} })] : [];
    if (!this.deps.webSearch && !mentionsUrl) return { tools: images, notes: [] };
    return { tools: [...this.web({ allowedDomains: [], contextSize: 'medium', externalWebAccess: true }, log).tools, ...images], notes: [] };
  }

  /** The image_generation tool at a size and quality, its fee the price of one image there. */
  imageGeneration(config: Omit<ImageToolConfig, 'feeUsd'>): AgentTool {
    const { engine, priceUsd } = this.deps.images!;
    const px = config.size === 'auto' ? { width: 1024, height: 1024 } : config.size;
    return imageGenerationTool(engine, { ...config, feeUsd: priceUsd(config.quality, px.width, px.height) });
  }

  /** Whether images can be made here (the image_generation tool). */
  get canDrawImages(): boolean {
    return this.deps.images !== undefined;
  }

  /** The web tools: web_search with a backend (else the model is told it cannot search), open_page and find_in_page. */
  web(entry: WebSearchEntry, log?: ContainerToolLog): ToolSet {
    if (!entry.externalWebAccess) return { tools: [], notes: [CANNOT_SEARCH] };
    const { prices } = this.deps;
    const tools = webTools(
      { backend: this.deps.webSearch, guard: this.deps.outbound, ...(log ? { log } : {}) },
      {
        allowedDomains: entry.allowedDomains,
        ...(entry.userLocation ? { userLocation: entry.userLocation } : {}),
        contextSize: entry.contextSize,
        searchFeeUsd: prices.webSearchUsd,
        pageFeeUsd: prices.pageUsd,
        maxUses: this.deps.webMaxUses,
      },
    );
    return { tools, notes: this.deps.webSearch ? [] : [CANNOT_SEARCH] };
  }

  fileSearch(accountId: string, config: FileSearchConfig, log?: ContainerToolLog): AgentTool {
    return fileSearchTool(this.deps.vectorSearch!, accountId, config, log);
  }

  codeInterpreter(lease: ContainerLease, log?: ContainerToolLog): AgentTool {
    return codeInterpreterTool(this.deps.containers!, lease, this.deps.sandboxTimeoutMs, log);
  }

  containerShell(lease: ContainerLease, log?: ContainerToolLog): AgentTool {
    return containerShellTool(this.deps.containers!, lease, this.deps.sandboxTimeoutMs, log);
  }

  /** The later code execution versions' two tools (the messages surface): bash and the text editor, in one container. */
  codeExecution(lease: ContainerLease, log?: ContainerToolLog): AgentTool[] {
    const { containers, sandboxTimeoutMs } = this.deps;
    return [bashCodeExecutionTool(containers!, lease, sandboxTimeoutMs, log), textEditorCodeExecutionTool(containers!, lease, sandboxTimeoutMs, log)];
  }

  /** Checks a remote MCP server's address, its name resolved, before anything runs (throws OutboundRefused saying why). */
  async checkMcpServer(url: string): Promise<void> {
    await this.deps.outbound.checkAddress(url);
  }

  /** A remote MCP server's tools (throws McpFailed). */
  listMcp(server: McpServer, signal: AbortSignal): Promise<McpToolInfo[]> {
    return listMcpTools(this.deps.outbound, server, { signal });
  }

  /** A remote MCP tool that runs without approval. */
  mcp(server: McpServer, info: McpToolInfo, description?: string): AgentTool {
    return mcpAgentTool(this.deps.outbound, server, info, description);
  }

  /** An approved remote MCP call, run once with the arguments it was approved with. */
  mcpCall(server: McpServer, name: string, argumentsJson: string, signal: AbortSignal): Promise<ToolOutput> {
    return runMcpCall(this.deps.outbound, server, name, argumentsJson, signal);
  }
}
