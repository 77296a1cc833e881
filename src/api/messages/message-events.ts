// Stream parts → the messages-style surface's wire shapes: the events of a streamed
// message (content_block_start / _delta / _stop per block, thinking closed by its
// signature_delta) and, from the same blocks, the whole Message object. One encoder for
// both, so a streamed answer accumulates to exactly the non-streamed one.
import type { FinishReason, StreamPart, Usage } from '../../providers/types.ts';
import type { ThinkingSignatures } from './thinking-signature.ts';
import { DEFAULT_EXPIRY_MINUTES } from '../containers/container-runtime.ts';
import { BASH_CODE_EXECUTION_NAME, TEXT_EDITOR_CODE_EXECUTION_NAME, type BashRunData, type TextEditorData, type TextEditorResult } from '../../tools/containers/code-execution-tools.ts';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export interface MessageContext {
  id: string;
  /** The model as the request named it (echoed). */
  model: string;
  accountId: string;
  signatures: ThinkingSignatures;
  thinking: 'off' | 'shown' | 'omitted';
  /** The input tokens counted before the provider ran (message_start's usage). */
  inputTokens: number;
  stopSequences: readonly string[];
  /** The offline prefix cache's verdict on this request's prefix, null without one (or on an upstream). */
  cache: { tokens: number; use: 'created' | 'read' } | null;
  /** The request offers server tools: usage counts their requests (`server_tool_use`). */
  serverTools: boolean;
  /** The MCP tools the model may call, by the function name it sees: their server and own name. */
  mcpNames: ReadonlyMap<string, { server: string; tool: string }>;
}

type Block = Record<string, unknown>;
type Event = Record<string, unknown> & { type: string };
const NONE: Event[] = [];

export function stopReasonFor(reason: FinishReason, stopSequence: string | null, paused = false): StopReason {
  // The agent loop stopped at its limit with server calls still wanted: the client sends the turn back to continue it.
  if (paused) return 'pause_turn';
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return stopSequence !== null ? 'stop_sequence' : 'end_turn';
  }
}

type CacheUse = MessageContext['cache'];

/**
 * The counters of a message's usage (message_delta carries these, cumulative, and a
 * client overwrites with them). input_tokens is what follows the cached prefix, as the
 * vendor counts it: input + creation + read is the whole input.
 */
function counters(usage: Usage, cache: CacheUse, server?: ServerUse) {
  const read = cache?.use === 'read' ? cache.tokens : (usage.cachedInputTokens ?? 0);
  const created = cache?.use === 'created' ? cache.tokens : 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - read - created),
    cache_creation_input_tokens: created,
    cache_read_input_tokens: read,
    output_tokens: usage.outputTokens,
    ...(server ? { server_tool_use: { web_search_requests: server.web_search, web_fetch_requests: server.web_fetch } } : {}),
  };
}

/** Requests each server tool made (those past their max_uses made none). */
type ServerUse = { web_search: number; web_fetch: number };

/** The usage object of a message (message_start's holds the same fields, so a stream accumulates to the whole message). */
export function usageObject(usage: Usage, cache: CacheUse, server?: ServerUse) {
  const c = counters(usage, cache, server);
  return { ...c, cache_creation: { ephemeral_5m_input_tokens: c.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard' };
}

/** Turns parts into events, and keeps the blocks they make for the whole message. */
export class MessageEncoder {
  readonly content: Block[] = [];
  /** The open block of each part id (text, reasoning, tool input), and its index. */
  private readonly open = new Map<string, { index: number; block: Block; json?: string }>();
  finish: { reason: FinishReason; stopSequence: string | null; paused: boolean } | null = null;
  private hasToolUse = false;
  /** Off for a whole (non-streamed) answer: the blocks are built, no event objects per token. */
  private emit = true;
  private readonly serverUse: ServerUse | undefined;
  /** The container code_execution ran in: the message names it (`container`), so a later request can use it again. */
  private container: { id: string; expires_at: string } | null = null;

  constructor(private readonly ctx: MessageContext) {
    this.serverUse = ctx.serverTools ? { web_search: 0, web_fetch: 0 } : undefined;
  }

  messageStart(): Event {
    return {
      type: 'message_start',
      message: {
        id: this.ctx.id,
        type: 'message',
        role: 'assistant',
        model: this.ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: null,
        usage: usageObject({ inputTokens: this.ctx.inputTokens, outputTokens: 1 }, this.ctx.cache, this.serverUse && { web_search: 0, web_fetch: 0 }),
      },
    };
  }

  private start(id: string, block: Block): Event {
    const index = this.content.length;
    this.content.push(block);
    this.open.set(id, { index, block });
    return { type: 'content_block_start', index, content_block: { ...block } };
  }

  /** Builds the blocks of a whole answer from one part, without its events. */
  collect(e: StreamPart): void {
    this.emit = false;
    this.events(e);
  }

  /** The events for one part (none for parts this surface does not show). */
  events(e: StreamPart): Event[] {
    switch (e.type) {
      case 'text-start':
        return [this.start(e.id, { type: 'text', text: '' })];
      case 'text-delta': {
        const o = this.open.get(e.id);
        if (!o) return [];
        o.block.text = (o.block.text as string) + e.delta;
        if (!this.emit) return NONE;
        return [{ type: 'content_block_delta', index: o.index, delta: { type: 'text_delta', text: e.delta } }];
      }
      case 'reasoning-start':
        return this.ctx.thinking === 'off' ? [] : [this.start(e.id, { type: 'thinking', thinking: '', signature: '' })];
      case 'reasoning-delta': {
        const o = this.open.get(e.id);
        if (!o) return [];
        if (this.ctx.thinking === 'omitted') return [];
        o.block.thinking = (o.block.thinking as string) + e.delta;
        if (!this.emit) return NONE;
        return [{ type: 'content_block_delta', index: o.index, delta: { type: 'thinking_delta', thinking: e.delta } }];
      }
      case 'reasoning-end': {
        const o = this.open.get(e.id);
        if (!o) return [];
        this.open.delete(e.id);
        const signature = this.ctx.signatures.sign(this.ctx.accountId, o.block.thinking as string);
        o.block.signature = signature;
        return [
          { type: 'content_block_delta', index: o.index, delta: { type: 'signature_delta', signature } },
          { type: 'content_block_stop', index: o.index },
        ];
      }
      case 'tool-input-start': {
        if (e.providerExecuted) {
          // A server tool's call (or an MCP server's): shown as it opens, its input streamed like a client call's.
          const mcp = this.ctx.mcpNames.get(e.toolName);
          const block = mcp ? { type: 'mcp_tool_use', id: e.id, name: mcp.tool, server_name: mcp.server, input: {} } : { type: 'server_tool_use', id: e.id, name: e.toolName, input: {} };
          const event = this.start(e.id, block);
          this.open.get(e.id)!.json = '';
          return [event];
        }
        this.hasToolUse = true;
        const event = this.start(e.id, { type: 'tool_use', id: e.id, name: e.toolName, input: {} });
        this.open.get(e.id)!.json = '';
        return [event];
      }
      case 'tool-input-delta': {
        const o = this.open.get(e.id);
        if (!o || o.json === undefined) return [];
        o.json += e.delta;
        return e.delta === '' || !this.emit ? [] : [{ type: 'content_block_delta', index: o.index, delta: { type: 'input_json_delta', partial_json: e.delta } }];
      }
      case 'text-end':
      case 'tool-input-end': {
        const o = this.open.get(e.id);
        if (!o) return [];
        this.open.delete(e.id);
        if (o.json !== undefined) o.block.input = toolInput(o.json);
        return [{ type: 'content_block_stop', index: o.index }];
      }
      case 'tool-result': {
        const block = this.resultBlock(e.toolCallId, e.toolName, e.data, e.result);
        if (!block) return [];
        const index = this.content.length;
        this.content.push(block);
        return this.emit ? [{ type: 'content_block_start', index, content_block: block }, { type: 'content_block_stop', index }] : NONE;
      }
      case 'finish': {
        const stopSequence = e.reason === 'stop' ? matchedStop(this.content, this.ctx.stopSequences, e.stopSequence) : null;
        // A provider that says "stop" after a client tool call still ends the turn for the tool.
        this.finish = { reason: this.hasToolUse && e.reason === 'stop' ? 'tool_calls' : e.reason, stopSequence, paused: e.paused === true };
        // Blocks a provider left open are closed before the message ends.
        const closing: Event[] = [];
        for (const [id, o] of this.open) {
          this.open.delete(id);
          if (o.json !== undefined) o.block.input = toolInput(o.json);
          if (o.block.type === 'thinking') {
            o.block.signature = this.ctx.signatures.sign(this.ctx.accountId, o.block.thinking as string);
            closing.push({ type: 'content_block_delta', index: o.index, delta: { type: 'signature_delta', signature: o.block.signature } });
          }
          closing.push({ type: 'content_block_stop', index: o.index });
        }
        return closing;
      }
      default:
        return [];
    }
  }

  /** A server tool's result block in the vendor's shape; null for a tool this surface does not show. */
  private resultBlock(toolUseId: string, name: string, data: unknown, text: string): Block | null {
    if (this.ctx.mcpNames.has(name)) {
      const mcp = data as { kind?: string; status?: string; output?: string | null } | undefined;
      const failed = mcp?.kind !== 'mcp' || mcp.status !== 'completed';
      return { type: 'mcp_tool_result', tool_use_id: toolUseId, is_error: failed, content: [{ type: 'text', text: failed ? text : (mcp!.output ?? '') }] };
    }
    const web = data as { kind?: string; status?: string; sources?: { url: string; title: string }[]; action?: { url?: string } } | undefined;
    // The loop answers a call past max_uses without running the tool: no data.
    const error = web?.kind !== 'web' ? 'max_uses_exceeded' : web.status !== 'completed' ? 'unavailable' : null;
    if (name === 'web_search') {
      if (!error && this.serverUse) this.serverUse.web_search++;
      const content = error
        ? { type: 'web_search_tool_result_error', error_code: error }
        : (web!.sources ?? []).map((s) => ({ type: 'web_search_result', url: s.url, title: s.title, encrypted_content: '', page_age: null }));
      return { type: 'web_search_tool_result', tool_use_id: toolUseId, content };
    }
    if (name === BASH_CODE_EXECUTION_NAME) {
      const ran = data as BashRunData | undefined;
      const type = 'bash_code_execution_tool_result';
      if (ran?.kind !== 'bash') return { type, tool_use_id: toolUseId, content: { type: 'bash_code_execution_tool_result_error', error_code: 'unavailable' } };
      this.ranIn(ran.containerId);
      if (ran.status !== 'completed') {
        const code = ran.status === 'timed_out' ? 'execution_time_exceeded' : ran.status === 'invalid' ? 'invalid_tool_input' : 'unavailable';
        return { type, tool_use_id: toolUseId, content: { type: 'bash_code_execution_tool_result_error', error_code: code } };
      }
      // Files the command wrote are container files (GET /v1/containers/{id}/files), not the Files API's: no output blocks name them.
      return { type, tool_use_id: toolUseId, content: { type: 'bash_code_execution_result', stdout: ran.stdout, stderr: ran.stderr, return_code: ran.exitCode ?? 0, content: [] } };
    }
    if (name === TEXT_EDITOR_CODE_EXECUTION_NAME) {
      const edit = data as TextEditorData | undefined;
      if (edit?.kind === 'text_editor') this.ranIn(edit.containerId);
      return { type: 'text_editor_code_execution_tool_result', tool_use_id: toolUseId, content: editorContent(edit?.kind === 'text_editor' ? edit.result : { type: 'error', code: 'unavailable', message: text }) };
    }
    if (name === 'code_execution') {
      const code = data as { containerId?: string; status?: string } | undefined;
      if (code?.containerId) this.ranIn(code.containerId);
      let ran: { exit_code?: number | null; timed_out?: boolean; stdout?: string; stderr?: string } = {};
      try {
        ran = JSON.parse(text) as typeof ran;
      } catch {
        // A result that is not the tool's JSON is a run that did not happen.
      }
      if (!code || ran.timed_out || (code.status !== 'completed' && ran.exit_code == null)) {
        return { type: 'code_execution_tool_result', tool_use_id: toolUseId, content: { type: 'code_execution_tool_result_error', error_code: ran.timed_out ? 'execution_time_exceeded' : 'unavailable' } };
      }
      return { type: 'code_execution_tool_result', tool_use_id: toolUseId, content: { type: 'code_execution_result', stdout: ran.stdout ?? '', stderr: ran.stderr ?? '', return_code: ran.exit_code ?? 0, content: [] } };
    }
    if (name === 'web_fetch') {
      if (!error && this.serverUse) this.serverUse.web_fetch++;
      if (error) return { type: 'web_fetch_tool_result', tool_use_id: toolUseId, content: { type: 'web_fetch_tool_result_error', error_code: error === 'unavailable' ? 'url_not_accessible' : error } };
      const source = web!.sources?.[0];
      return {
        type: 'web_fetch_tool_result',
        tool_use_id: toolUseId,
        content: {
          type: 'web_fetch_result',
          url: source?.url ?? web!.action?.url ?? '',
          retrieved_at: new Date().toISOString(),
          content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, title: source?.title ?? null },
        },
      };
    }
    return null;
  }

  /** The container a code execution tool ran in: the message names it (`container`), so a later request can use it again. */
  private ranIn(containerId: string): void {
    this.container = { id: containerId, expires_at: new Date(Date.now() + DEFAULT_EXPIRY_MINUTES * 60_000).toISOString() };
  }

  get stopReason(): StopReason {
    return this.finish ? stopReasonFor(this.finish.reason, this.finish.stopSequence, this.finish.paused) : 'end_turn';
  }

  messageDelta(usage: Usage): Event {
    return {
      type: 'message_delta',
      delta: { stop_reason: this.stopReason, stop_sequence: this.finish?.stopSequence ?? null, stop_details: null, container: this.container },
      usage: counters(usage, this.ctx.cache, this.serverUse),
    };
  }

  /** The whole message, from the blocks the events built. */
  message(usage: Usage): Record<string, unknown> {
    return {
      id: this.ctx.id,
      type: 'message',
      role: 'assistant',
      model: this.ctx.model,
      content: this.content,
      stop_reason: this.stopReason,
      stop_sequence: this.finish?.stopSequence ?? null,
      stop_details: null,
      container: this.container,
      usage: usageObject(usage, this.ctx.cache, this.serverUse),
    };
  }
}

/** A text editor result as the content of a `text_editor_code_execution_tool_result`. */
function editorContent(r: TextEditorResult): Block {
  switch (r.type) {
    case 'view':
      return { type: 'text_editor_code_execution_view_result', file_type: r.fileType, content: r.content, num_lines: r.numLines, start_line: r.startLine, total_lines: r.totalLines };
    case 'create':
      return { type: 'text_editor_code_execution_create_result', is_file_update: r.isFileUpdate };
    case 'str_replace':
      return { type: 'text_editor_code_execution_str_replace_result', lines: r.lines, old_start: r.oldStart, old_lines: r.oldLines, new_start: r.newStart, new_lines: r.newLines };
    case 'error':
      return { type: 'text_editor_code_execution_tool_result_error', error_code: r.code, error_message: r.message };
  }
}

/** A tool call's arguments as the object `input` must be (a provider's malformed or non-object JSON becomes `{}`). */
function toolInput(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json === '' ? '{}' : json);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Which stop sequence ended the text: the one the provider named, else none (a provider
 * that stops at a sequence leaves it out of the text, so only it can tell).
 */
function matchedStop(_content: Block[], sequences: readonly string[], named: string | undefined): string | null {
  if (named !== undefined && sequences.includes(named)) return named;
  return null;
}
