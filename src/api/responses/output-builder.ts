// Stream parts → a response's output items and its streaming events, in one place so
// the streamed events, the stored response and the non-streamed one cannot differ. Items
// are strictly sequential, as the reference streams them: each opens with
// `response.output_item.added`, carries its deltas, and closes with its `.done` events
// and `response.output_item.done` before the next item opens. Sequence numbers are given
// by the writer (response-stream.ts), not here. A hosted tool the service ran (its
// input providerExecuted, passed on whole by the agent loop just before it runs) is its
// hosted item: `file_search_call` opens when its input ends and closes with its
// result; the passages it found are what later answers cite as `file_citation`. A web
// tool call (search, open_page, find_in_page) is a `web_search_call`; the sources it
// returned are what answers cite as `url_citation` (a Markdown link to one).
import type { FinishReason, StreamPart, TokenLogprob, Usage } from '../../providers/types.ts';
import type { WrittenFile } from '../../tools/containers/container-tool.ts';
import { containerCitations } from './container-citations.ts';
import { codeOf, type CodeInterpreterData } from '../../tools/containers/code-interpreter-tool.ts';
import { shellAction, type ShellCallData } from '../../tools/containers/shell-tool.ts';
import { queriesOf, type FileSearchData } from '../../tools/file-search/file-search-tool.ts';
import { fileCitations, type CitedFile } from './file-citations.ts';
import { CitedSources } from '../../tools/web-search/citations.ts';
import { webActionOf, type WebCallData } from '../../tools/web-search/web-tools.ts';
import { newCallId, newItemId, shownItem, type Item } from './items.ts';
import { callItem, type ToolKind } from './tool-mapping.ts';
import { itemEvents } from './replay.ts';
import type { McpCallData } from '../../tools/mcp/mcp-tool.ts';
import type { ImageCallData } from '../../tools/images/image-generation-tool.ts';

export type StreamEvent = Record<string, unknown> & { type: string };

interface OpenText {
  item: Item;
  index: number;
  text: string;
  logprobs: unknown[];
}
interface OpenReasoning {
  item: Item;
  index: number;
  text: string;
}
/** A hosted tool call the service runs; its item opens once its input has ended. */
interface OpenHosted {
  kind: HostedKind;
  /** The function the model called (a web call's action depends on it). */
  name: string;
  callId: string;
  args: string;
  item?: Item;
  index?: number;
}
type HostedKind = Extract<ToolKind, { kind: 'file_search' | 'code_interpreter' | 'container_shell' | 'web_search' | 'mcp' | 'image_generation' }>;
const HOSTED = new Set(['file_search', 'code_interpreter', 'container_shell', 'web_search', 'mcp', 'image_generation']);
const isHosted = (k: ToolKind | undefined): k is HostedKind => k !== undefined && HOSTED.has(k.kind);

/** Code streams in pieces of about this many characters (whole lines where they fit). */
const CODE_DELTA_CHARS = 512;

/** The code in deltas: lines gathered up to CODE_DELTA_CHARS, a longer line cut. */
function codeDeltas(code: string): string[] {
  const out: string[] = [];
  let piece = '';
  for (const line of code.split(/(?<=\n)/)) {
    if (piece !== '' && piece.length + line.length > CODE_DELTA_CHARS) {
      out.push(piece);
      piece = '';
    }
    if (line.length <= CODE_DELTA_CHARS) {
      piece += line;
      continue;
    }
    let i = 0;
    for (; line.length - i > CODE_DELTA_CHARS; i += CODE_DELTA_CHARS) out.push(line.slice(i, i + CODE_DELTA_CHARS));
    piece = line.slice(i);
  }
  if (piece !== '') out.push(piece);
  return out;
}

interface OpenCall {
  /** Set when streamed as a function call (added at its first fragment). */
  item?: Item;
  index?: number;
  providerName: string;
  callId: string;
  args: string;
}

const logprobsOf = (lp: TokenLogprob[]) =>
  lp.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes ?? [], top_logprobs: t.top_logprobs.map((x) => ({ token: x.token, logprob: x.logprob, bytes: x.bytes ?? [] })) }));

export class OutputBuilder {
  readonly output: Item[] = [];
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  finishReason: FinishReason = 'stop';
  private text: OpenText | null = null;
  private reasoning: OpenReasoning | null = null;
  /** Client tool calls whose input is still streaming, by call id. */
  private readonly calls = new Map<string, OpenCall>();
  /** Hosted tool calls not answered yet, by call id. */
  private readonly hosted = new Map<string, OpenHosted>();
  /** The passages file searches found, by the number the model cites them with. */
  private readonly sources = new Map<number, CitedFile>();
  /** The files programs wrote in this response, by /mnt/data path: what answers cite as container files. */
  private readonly written = new Map<string, WrittenFile>();
  /** The pages web calls returned: what answers cite as url_citation. */
  private readonly webSources = new CitedSources();

  /**
   * `include`: the request's include; file search results and code logs show in the
   * events only when it asks for them (the output keeps them whatever it asks: see `shown`).
   */
  constructor(
    private readonly kinds: ReadonlyMap<string, ToolKind>,
    private readonly withLogprobs = false,
    private readonly include: readonly string[] = [],
  ) {}

  /** The output as the caller sees it: a file search's results and code logs only when asked for. */
  get shown(): Item[] {
    return this.output.map((i) => this.show(i));
  }

  /** The events one stream part produces (none for starts of nothing yet, results, warnings). */
  add(e: StreamPart): StreamEvent[] {
    const out: StreamEvent[] = [];
    switch (e.type) {
      case 'reasoning-start':
      case 'reasoning-delta':
        if (!this.reasoning) {
          this.closeAll(out);
          this.openReasoning(out);
        }
        if (e.type === 'reasoning-delta') {
          this.reasoning!.text += e.delta;
          out.push({ type: 'response.reasoning_summary_text.delta', item_id: this.reasoning!.item.id, output_index: this.reasoning!.index, summary_index: 0, delta: e.delta });
        }
        break;
      case 'reasoning-end':
        this.closeReasoning(out);
        break;
      case 'text-start':
      case 'text-delta': {
        if (!this.text) {
          this.closeAll(out);
          this.openText(out);
        }
        if (e.type === 'text-start' || (e.delta === '' && !e.logprobs)) break;
        const text = this.text!;
        text.text += e.delta;
        const lp = this.withLogprobs && e.logprobs ? logprobsOf(e.logprobs) : [];
        text.logprobs.push(...lp);
        out.push({ type: 'response.output_text.delta', item_id: text.item.id, output_index: text.index, content_index: 0, delta: e.delta, logprobs: lp });
        break;
      }
      case 'text-end':
        this.closeText(out);
        break;
      case 'tool-input-start': {
        if (e.providerExecuted) {
          const kind = this.kinds.get(e.toolName);
          // Service tools without an item of their own show nothing.
          if (!isHosted(kind)) break;
          this.closeAll(out);
          this.hosted.set(e.id, { kind, name: e.toolName, callId: e.id || newCallId(), args: '' });
          break;
        }
        this.closeReasoning(out);
        this.closeText(out);
        const call: OpenCall = { providerName: e.toolName, callId: e.id || newCallId(), args: '' };
        this.calls.set(e.id, call);
        const kind = this.kinds.get(call.providerName);
        if (!kind || kind.kind === 'function') this.openFunctionCall(call, out);
        break;
      }
      case 'tool-input-delta': {
        const hosted = this.hosted.get(e.id);
        if (hosted) hosted.args += e.delta;
        const call = this.calls.get(e.id);
        if (!call) break;
        call.args += e.delta;
        if (call.item && e.delta) out.push({ type: 'response.function_call_arguments.delta', item_id: call.item.id, output_index: call.index, delta: e.delta });
        break;
      }
      case 'tool-input-end': {
        const hosted = this.hosted.get(e.id);
        if (hosted && !hosted.item) this.openHosted(hosted, out);
        const call = this.calls.get(e.id);
        if (call) this.closeCall(e.id, call, out);
        break;
      }
      case 'tool-result': {
        const hosted = this.hosted.get(e.toolCallId);
        if (hosted) this.closeHosted(e.toolCallId, hosted, e.data, out);
        break;
      }
      case 'finish':
        this.finishReason = e.reason;
        if (e.usage) this.usage = e.usage;
        this.closeAll(out);
        break;
      default:
    }
    return out;
  }

  /** Closes whatever is still open (a stream cut short); idempotent. */
  close(): StreamEvent[] {
    const out: StreamEvent[] = [];
    this.closeAll(out);
    return out;
  }

  /** `completed`, or `incomplete` with the reason when the output was cut. */
  get status(): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
    if (this.finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    if (this.finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
    return { status: 'completed', incomplete_details: null };
  }

  private get itemStatus(): 'completed' | 'incomplete' {
    return this.finishReason === 'length' || this.finishReason === 'content_filter' ? 'incomplete' : 'completed';
  }

  private show(item: Item): Item {
    return shownItem(item, this.include);
  }

  private push(item: Item): number {
    this.output.push(item);
    return this.output.length - 1;
  }

  private openText(out: StreamEvent[]): void {
    const item: Item = { id: newItemId('message'), type: 'message', status: 'in_progress', content: [], role: 'assistant' };
    const index = this.push(item);
    this.text = { item, index, text: '', logprobs: [] };
    out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, content: [] } });
    out.push({ type: 'response.content_part.added', item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
  }

  private openReasoning(out: StreamEvent[]): void {
    const item: Item = { id: newItemId('reasoning'), type: 'reasoning', summary: [] };
    const index = this.push(item);
    this.reasoning = { item, index, text: '' };
    out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, summary: [] } });
    out.push({ type: 'response.reasoning_summary_part.added', item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
  }

  private openFunctionCall(c: OpenCall, out: StreamEvent[]): void {
    const item = callItem(this.kinds.get(c.providerName), c.providerName, c.callId, '', 'completed');
    item.status = 'in_progress';
    c.item = item;
    c.index = this.push(item);
    out.push({ type: 'response.output_item.added', output_index: c.index, item: { ...item } });
  }

  private closeAll(out: StreamEvent[]): void {
    this.closeReasoning(out);
    this.closeText(out);
    for (const [id, call] of this.calls) this.closeCall(id, call, out);
    // A hosted call the stream ended before it answered (cut short): closed incomplete.
    for (const [id, hosted] of this.hosted) this.closeHosted(id, hosted, undefined, out);
  }

  /** A hosted call is about to run: its item opens (and shows its input). */
  private openHosted(h: OpenHosted, out: StreamEvent[]): void {
    this.closeReasoning(out);
    this.closeText(out);
    for (const [id, call] of this.calls) this.closeCall(id, call, out);
    if (h.kind.kind === 'code_interpreter') this.openCode(h, h.kind.containerId, out);
    else if (h.kind.kind === 'container_shell') this.openShell(h, h.kind.containerId, out);
    else if (h.kind.kind === 'web_search') this.openWebSearch(h, out);
    else if (h.kind.kind === 'mcp') this.openMcpCall(h, h.kind, out);
    else if (h.kind.kind === 'image_generation') this.openImage(h, out);
    else this.openFileSearch(h, out);
  }

  /** A hosted call answered (data), or the stream ended first (undefined): its item done. */
  private closeHosted(id: string, h: OpenHosted, data: unknown, out: StreamEvent[]): void {
    this.hosted.delete(id);
    if (!h.item) this.openHosted(h, out);
    if (h.kind.kind === 'code_interpreter') this.closeCode(h, data as CodeInterpreterData | undefined, out);
    else if (h.kind.kind === 'container_shell') this.closeShell(h, data as ShellCallData | undefined, out);
    else if (h.kind.kind === 'web_search') this.closeWebSearch(h, data as WebCallData | undefined, out);
    else if (h.kind.kind === 'mcp') this.closeMcpCall(h, data as McpCallData | undefined, out);
    else if (h.kind.kind === 'image_generation') this.closeImage(h, data as ImageCallData | undefined, out);
    else this.closeFileSearch(h, data as FileSearchData | undefined, out);
  }

  /** The code is about to run: its item opens, the code streams, then it is interpreting. */
  private openCode(h: OpenHosted, containerId: string, out: StreamEvent[]): void {
    const item: Item = { id: newItemId('code_interpreter_call'), type: 'code_interpreter_call', status: 'in_progress', container_id: containerId, code: '', outputs: null };
    h.item = item;
    h.index = this.push(item);
    const at = { output_index: h.index, item_id: item.id };
    out.push({ type: 'response.output_item.added', output_index: h.index, item: { ...item } });
    out.push({ type: 'response.code_interpreter_call.in_progress', ...at });
    const code = codeOf(h.args);
    for (const delta of codeDeltas(code)) out.push({ type: 'response.code_interpreter_call_code.delta', ...at, delta });
    out.push({ type: 'response.code_interpreter_call_code.done', ...at, code });
    item.code = code;
    item.status = 'interpreting';
    out.push({ type: 'response.code_interpreter_call.interpreting', ...at });
  }

  private closeCode(h: OpenHosted, data: CodeInterpreterData | undefined, out: StreamEvent[]): void {
    const item = h.item!;
    if (data) {
      item.status = data.status;
      item.outputs = data.logs === '' ? [] : [{ type: 'logs', logs: data.logs }];
      for (const f of data.files) this.written.set(f.path, f);
    } else item.status = 'incomplete';
    if (item.status === 'completed') out.push({ type: 'response.code_interpreter_call.completed', output_index: h.index, item_id: item.id });
    out.push({ type: 'response.output_item.done', output_index: h.index, item: this.show({ ...item }) });
  }

  /** The commands are about to run: the shell_call item, each command streamed, done. */
  private openShell(h: OpenHosted, containerId: string, out: StreamEvent[]): void {
    const action = shellAction(h.args);
    const item: Item = {
      id: newItemId('shell_call'),
      type: 'shell_call',
      call_id: h.callId,
      action: { ...action, commands: [] },
      status: 'in_progress',
      environment: { type: 'container_reference', container_id: containerId },
    };
    h.item = item;
    h.index = this.push(item);
    out.push({ type: 'response.output_item.added', output_index: h.index, item: { ...item, action: { ...action, commands: [] } } });
    action.commands.forEach((command, i) => {
      const at = { output_index: h.index, command_index: i };
      out.push({ type: 'response.shell_call_command.added', ...at, command: '' });
      if (command !== '') out.push({ type: 'response.shell_call_command.delta', ...at, delta: command });
      out.push({ type: 'response.shell_call_command.done', ...at, command });
    });
    item.action = action;
    item.status = 'completed';
    out.push({ type: 'response.output_item.done', output_index: h.index, item: { ...item } });
  }

  /** The commands ran: their shell_call_output item, each command's output streamed. */
  private closeShell(h: OpenHosted, data: ShellCallData | undefined, out: StreamEvent[]): void {
    // Cut short before the commands ran: an incomplete output with nothing in it, so the
    // call streamed as done still has its answer (a continuation sends both to the model).
    const maxLength = data?.action.max_output_length ?? (h.item!.action as ShellCallData['action']).max_output_length;
    for (const f of data?.files ?? []) this.written.set(f.path, f);
    const item: Item = { id: newItemId('shell_call_output'), type: 'shell_call_output', call_id: h.callId, status: 'in_progress', output: [], max_output_length: maxLength };
    const index = this.push(item);
    out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, output: [] } });
    const output = data?.output ?? [];
    output.forEach((o, i) => {
      const at = { item_id: item.id, output_index: index, command_index: i };
      out.push({ type: 'response.shell_call_output_content.delta', ...at, delta: { stdout: o.stdout, stderr: o.stderr } });
      out.push({ type: 'response.shell_call_output_content.done', ...at, output: [o] });
    });
    item.output = output;
    item.status = data ? 'completed' : 'incomplete';
    out.push({ type: 'response.output_item.done', output_index: index, item: { ...item } });
  }

  /** The search is about to run: its item opens, in progress, searching. */
  private openFileSearch(h: OpenHosted, out: StreamEvent[]): void {
    const item: Item = { id: newItemId('file_search_call'), type: 'file_search_call', status: 'in_progress', queries: queriesOf(h.args), results: null };
    h.item = item;
    h.index = this.push(item);
    const at = { output_index: h.index, item_id: item.id };
    out.push({ type: 'response.output_item.added', output_index: h.index, item: { ...item } });
    out.push({ type: 'response.file_search_call.in_progress', ...at });
    out.push({ type: 'response.file_search_call.searching', ...at });
  }

  /** The search answered (or the stream ended first): its results kept, its item done. */
  private closeFileSearch(h: OpenHosted, data: FileSearchData | undefined, out: StreamEvent[]): void {
    const item = h.item!;
    if (data) {
      item.queries = data.queries;
      item.status = data.status;
      item.results = data.results;
      data.results.forEach((r, i) => this.sources.set(data.first + i, { file_id: r.file_id, filename: r.filename }));
    } else item.status = 'incomplete';
    if (item.status === 'completed') out.push({ type: 'response.file_search_call.completed', output_index: h.index, item_id: item.id });
    out.push({ type: 'response.output_item.done', output_index: h.index, item: this.show({ ...item }) });
  }

  /**
   * Items made before the model ran (a server's tool listing, an approved MCP call): in
   * the output first, streamed whole as the live stream would have sent them.
   */
  premade(items: readonly Item[]): StreamEvent[] {
    return items.flatMap((item) => itemEvents(item, this.push(item)));
  }

  /** An MCP call is about to run: its mcp_call item opens with its arguments. */
  private openMcpCall(h: OpenHosted, kind: { serverLabel: string; name: string }, out: StreamEvent[]): void {
    const item: Item = { id: newItemId('mcp_call'), type: 'mcp_call', server_label: kind.serverLabel, name: kind.name, arguments: '', output: null, error: null, status: 'in_progress', approval_request_id: null };
    h.item = item;
    h.index = this.push(item);
    const at = { output_index: h.index, item_id: item.id };
    out.push({ type: 'response.output_item.added', output_index: h.index, item: { ...item } });
    out.push({ type: 'response.mcp_call.in_progress', ...at });
    if (h.args) out.push({ type: 'response.mcp_call_arguments.delta', ...at, delta: h.args });
    out.push({ type: 'response.mcp_call_arguments.done', ...at, arguments: h.args });
    item.arguments = h.args;
  }

  /** The MCP server answered (or the stream ended first): output or error, the item done. */
  private closeMcpCall(h: OpenHosted, data: McpCallData | undefined, out: StreamEvent[]): void {
    const item = h.item!;
    if (data) {
      item.status = data.status;
      item.output = data.output;
      item.error = data.error;
    } else item.status = 'incomplete';
    const at = { output_index: h.index, item_id: item.id };
    if (item.status === 'completed') out.push({ type: 'response.mcp_call.completed', ...at });
    else if (item.status === 'failed') out.push({ type: 'response.mcp_call.failed', ...at });
    out.push({ type: 'response.output_item.done', output_index: h.index, item: { ...item } });
  }

  /** An image is about to be made: its image_generation_call item opens, in progress, generating (no partial images). */
  private openImage(h: OpenHosted, out: StreamEvent[]): void {
    const item: Item = { id: newItemId('image_generation_call'), type: 'image_generation_call', status: 'in_progress', result: null };
    h.item = item;
    h.index = this.push(item);
    const at = { output_index: h.index, item_id: item.id };
    out.push({ type: 'response.output_item.added', output_index: h.index, item: { ...item } });
    out.push({ type: 'response.image_generation_call.in_progress', ...at });
    item.status = 'generating';
    out.push({ type: 'response.image_generation_call.generating', ...at });
  }

  /** The image was made (its base64 the item's result), or it failed or the stream ended first. */
  private closeImage(h: OpenHosted, data: ImageCallData | undefined, out: StreamEvent[]): void {
    const item = h.item!;
    item.status = data?.status ?? 'failed';
    item.result = data?.result ?? null;
    if (item.status === 'completed') out.push({ type: 'response.image_generation_call.completed', output_index: h.index, item_id: item.id });
    out.push({ type: 'response.output_item.done', output_index: h.index, item: { ...item } });
  }

  /** A web call is about to run: its web_search_call item opens, in progress, searching. */
  private openWebSearch(h: OpenHosted, out: StreamEvent[]): void {
    const item: Item = { id: newItemId('web_search_call'), type: 'web_search_call', status: 'in_progress', action: webActionOf(h.name, h.args) };
    h.item = item;
    h.index = this.push(item);
    const at = { output_index: h.index, item_id: item.id };
    out.push({ type: 'response.output_item.added', output_index: h.index, item: { ...item } });
    out.push({ type: 'response.web_search_call.in_progress', ...at });
    item.status = 'searching';
    out.push({ type: 'response.web_search_call.searching', ...at });
  }

  /** The web call answered (or the stream ended first): its action as it ran, its item done. */
  private closeWebSearch(h: OpenHosted, data: WebCallData | undefined, out: StreamEvent[]): void {
    const item = h.item!;
    if (data) {
      item.action = data.action;
      item.status = data.status;
      this.webSources.add(data);
      // The reference's web_search_call has no incomplete status: one cut short failed.
    } else item.status = 'failed';
    if (item.status === 'completed') out.push({ type: 'response.web_search_call.completed', output_index: h.index, item_id: item.id });
    out.push({ type: 'response.output_item.done', output_index: h.index, item: { ...item } });
  }

  private closeReasoning(out: StreamEvent[]): void {
    if (!this.reasoning) return;
    const { item, index, text } = this.reasoning;
    this.reasoning = null;
    const part = { type: 'summary_text', text };
    item.summary = [part];
    out.push({ type: 'response.reasoning_summary_text.done', item_id: item.id, output_index: index, summary_index: 0, text });
    out.push({ type: 'response.reasoning_summary_part.done', item_id: item.id, output_index: index, summary_index: 0, part });
    out.push({ type: 'response.output_item.done', output_index: index, item: { ...item } });
  }

  private closeText(out: StreamEvent[]): void {
    if (!this.text) return;
    const { item, index, text, logprobs } = this.text;
    this.text = null;
    // Each [n] that names a passage found, each link to a file a program wrote: annotated before the text is done.
    const urls = this.webSources.citations(text).map((c) => ({ type: 'url_citation' as const, ...c }));
    const annotations = byPosition([...fileCitations(text, this.sources), ...containerCitations(text, this.written), ...urls]);
    const part = { type: 'output_text', annotations, logprobs, text };
    item.content = [part];
    item.status = this.itemStatus;
    annotations.forEach((annotation, i) =>
      out.push({ type: 'response.output_text.annotation.added', item_id: item.id, output_index: index, content_index: 0, annotation_index: i, annotation }),
    );
    out.push({ type: 'response.output_text.done', item_id: item.id, output_index: index, content_index: 0, text, logprobs });
    out.push({ type: 'response.content_part.done', item_id: item.id, output_index: index, content_index: 0, part });
    out.push({ type: 'response.output_item.done', output_index: index, item: { ...item } });
  }

  private closeCall(id: string, c: OpenCall, out: StreamEvent[]): void {
    this.calls.delete(id);
    const status = this.itemStatus;
    if (c.item) {
      c.item.arguments = c.args;
      c.item.status = status;
      out.push({ type: 'response.function_call_arguments.done', item_id: c.item.id, output_index: c.index, name: c.item.name, arguments: c.args });
      out.push({ type: 'response.output_item.done', output_index: c.index, item: { ...c.item } });
      return;
    }
    // Client tools other than functions: the whole item at once, its arguments decoded.
    const item = callItem(this.kinds.get(c.providerName), c.providerName, c.callId, c.args, status);
    const index = this.push(item);
    if (item.type === 'mcp_approval_request') {
      // The call waits for the caller's approval: the item as it is, no status of its own.
      out.push({ type: 'response.output_item.added', output_index: index, item: { ...item } });
      out.push({ type: 'response.output_item.done', output_index: index, item: { ...item } });
      return;
    }
    if (item.type === 'custom_tool_call') {
      out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, input: '', status: 'in_progress' } });
      out.push({ type: 'response.custom_tool_call_input.delta', item_id: item.id, output_index: index, delta: item.input });
      out.push({ type: 'response.custom_tool_call_input.done', item_id: item.id, output_index: index, input: item.input });
    } else out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress' } });
    out.push({ type: 'response.output_item.done', output_index: index, item: { ...item } });
  }
}

/** Annotations in text order (a file citation sits at `index`, a container file's at `start_index`). */
function byPosition<T extends { index?: number; start_index?: number }>(list: T[]): T[] {
  return list.sort((a, b) => (a.index ?? a.start_index ?? 0) - (b.index ?? b.start_index ?? 0));
}

/** The text of the assistant's messages, as the SDKs' `output_text`. */
export function outputText(output: readonly Item[]): string {
  let text = '';
  for (const item of output) {
    if (item.type !== 'message') continue;
    for (const p of item.content as { type: string; text?: string }[]) if (p.type === 'output_text') text += p.text ?? '';
  }
  return text;
}
