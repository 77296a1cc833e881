// Responses items → the provider's chat messages. The conversation a model sees is the
// earlier chain (previous responses or a conversation's items), then `instructions` as
// the system message, then this request's input. Client tool calls sent back become
// assistant tool calls under the name the model was offered (tool-mapping.ts), and
// their outputs tool messages, so a tool round trip reads the same on every provider.
import { CODE_INTERPRETER_FUNCTION_NAME } from '../../tools/containers/container-tool.ts';
import { invalidRequest, unsupportedParameter } from '../../errors.ts';
import type { ChatMessage, ContentPart, ToolCall } from '../../providers/types.ts';
import type { ResolvedFile } from '../files/resolve-parts.ts';
import { messageText, type Item } from './items.ts';
import { providerCall } from './tool-mapping.ts';
import { mcpFunctionName } from '../../tools/mcp/mcp-tool.ts';

export interface MessageContext {
  /** Stored files named by file_id, read for the caller's account. */
  files: ReadonlyMap<string, ResolvedFile>;
  /** The items a compaction item sealed (api/responses/compaction.ts), or a refusal. */
  unseal?(item: Item, param: string): Item[];
  /** Earlier items an item_reference may name. */
  earlier: ReadonlyMap<string, Item>;
  /** What each MCP approval request of the conversation came to, as the tool message that follows its call (approvalOutcomes). */
  approvals?: ReadonlyMap<string, ChatMessage>;
}

/**
 * The tool message each MCP approval request of the conversation is answered by, placed
 * right after the request's call whatever came between (an upstream wants every call's
 * result next to it): the result of the call it ran, that the user declined it, or that
 * it was never answered. An approval this request answers and whose call has not run
 * yet gets a message with empty content, filled in once it has (startResponse).
 */
export function approvalOutcomes(items: readonly Item[]): Map<string, ChatMessage & { role: 'tool' }> {
  const out = new Map<string, ChatMessage & { role: 'tool' }>();
  const set = (id: string, content: string) => out.set(id, { role: 'tool', tool_call_id: id, content });
  for (const item of items) if (item.type === 'mcp_approval_request') set(item.id, 'This call was not approved, so it did not run.');
  for (const item of items) {
    if (item.type === 'mcp_approval_response') {
      const id = String(item.approval_request_id);
      if (!out.has(id)) continue;
      if (item.approve === true) set(id, '');
      else set(id, `The user declined this call, so it did not run.${typeof item.reason === 'string' && item.reason ? ` Their reason: ${item.reason}` : ''}`);
    } else if (item.type === 'mcp_call' && typeof item.approval_request_id === 'string' && out.has(item.approval_request_id)) set(item.approval_request_id, mcpResult(item));
  }
  return out;
}

/** What the model reads of an MCP call's result. */
export function mcpResult(item: Item): string {
  if (typeof item.output === 'string') return item.output;
  const error = item.error as { message?: unknown; content?: { text?: unknown }[] } | null | undefined;
  const why = typeof error?.message === 'string' ? error.message : Array.isArray(error?.content) ? error.content.map((c) => String(c?.text ?? '')).join('\n') : 'it did not run';
  return `The tool failed: ${why}`;
}

/** Every stored file an item list names by file_id: id → the parameter naming it. */
export function fileIdsOf(items: readonly Item[], base = 'input'): Map<string, string> {
  const ids = new Map<string, string>();
  items.forEach((item, i) => {
    if (item.type !== 'message' || !Array.isArray(item.content)) return;
    (item.content as any[]).forEach((p, j) => {
      if ((p?.type === 'input_image' || p?.type === 'input_file') && typeof p.file_id === 'string' && !ids.has(p.file_id)) ids.set(p.file_id, `${base}[${i}].content[${j}].file_id`);
    });
  });
  return ids;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p: any) => (typeof p?.text === 'string' ? p.text : p?.type === 'input_image' ? '[image]' : p?.type === 'input_file' ? `[file ${p.filename ?? p.file_id ?? ''}]` : '')).join('');
  return JSON.stringify(output ?? null);
}

function userParts(item: Item, at: string, ctx: MessageContext, counter: { attachments: number }): string | ContentPart[] {
  const content = item.content as any[];
  const parts: ContentPart[] = [];
  content.forEach((p, j) => {
    switch (p.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        parts.push({ type: 'text', text: p.text });
        break;
      case 'refusal':
        parts.push({ type: 'text', text: p.refusal });
        break;
      case 'input_image': {
        counter.attachments++;
        if (p.file_id) {
          const f = ctx.files.get(p.file_id);
          if (!f) throw invalidRequest(`No file with id '${p.file_id}' exists for this account.`, `${at}.content[${j}].file_id`);
          parts.push({ type: 'image_url', url: f.dataUrl });
        } else parts.push({ type: 'image_url', url: p.image_url, ...(p.detail && p.detail !== 'original' ? { detail: p.detail } : {}) });
        break;
      }
      case 'input_file': {
        counter.attachments++;
        if (p.file_id) {
          const f = ctx.files.get(p.file_id);
          if (!f) throw invalidRequest(`No file with id '${p.file_id}' exists for this account.`, `${at}.content[${j}].file_id`);
          parts.push({ type: 'file', filename: p.filename ?? f.filename, data_url: f.dataUrl, ...(f.text !== undefined ? { text: f.text } : {}) });
        } else if (p.file_url) {
          throw unsupportedParameter(`${at}.content[${j}].file_url`, 'Files by URL are not fetched: upload the file and send its file_id, or send file_data.');
        } else parts.push({ type: 'file', ...(p.filename ? { filename: p.filename } : {}), ...(p.file_data ? { data_url: p.file_data } : {}) });
        break;
      }
      default:
        throw invalidRequest(`Unsupported content part type '${p.type}'.`, `${at}.content[${j}].type`);
    }
  });
  const only = parts.length === 1 ? parts[0]! : undefined;
  return only?.type === 'text' ? only.text : parts;
}

/** The items as chat messages; `base` names the list in errors (`input`). */
export function toMessages(items: readonly Item[], ctx: MessageContext, base = 'input', counter = { attachments: 0 }): ChatMessage[] {
  const out: ChatMessage[] = [];
  /** Calls join the assistant turn just before them (a model's parallel calls are one turn). */
  const addCall = (call: ToolCall) => {
    const last = out[out.length - 1];
    if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
    else out.push({ role: 'assistant', content: null, tool_calls: [call] });
  };
  const walk = (list: readonly Item[], at: (i: number) => string) =>
    list.forEach((item, i) => {
      const where = at(i);
      switch (item.type) {
        case 'message': {
          const role = item.role as string;
          if (role === 'system' || role === 'developer') out.push({ role, content: messageText(item) });
          else if (role === 'assistant') out.push({ role: 'assistant', content: messageText(item) });
          else out.push({ role: 'user', content: userParts(item, where, ctx, counter) });
          break;
        }
        case 'function_call':
        case 'custom_tool_call':
        case 'shell_call':
        case 'computer_call':
        case 'apply_patch_call': {
          const call = providerCall(item);
          addCall({ id: String(item.call_id), name: call!.name, arguments: call!.arguments });
          break;
        }
        case 'function_call_output':
        case 'custom_tool_call_output':
          out.push({ role: 'tool', tool_call_id: String(item.call_id), content: outputText(item.output) });
          break;
        case 'code_interpreter_call': {
          // The code the service ran and what it printed, so the model can build on it.
          const id = String(item.id);
          addCall({ id, name: CODE_INTERPRETER_FUNCTION_NAME, arguments: JSON.stringify({ code: typeof item.code === 'string' ? item.code : '' }) });
          // Outputs are null when the item was read without include code_interpreter_call.outputs.
          const logs = Array.isArray(item.outputs) ? item.outputs.map((o: any) => (o?.type === 'logs' && typeof o.logs === 'string' ? o.logs : '')).join('') : null;
          out.push({ role: 'tool', tool_call_id: id, content: logs === null ? 'The output of this run is not available.' : logs === '' ? 'The program printed nothing.' : logs });
          break;
        }
        case 'shell_call_output':
          out.push({ role: 'tool', tool_call_id: String(item.call_id), content: JSON.stringify(item.output) });
          break;
        case 'computer_call_output':
          counter.attachments++;
          out.push({ role: 'tool', tool_call_id: String(item.call_id), content: 'A screenshot of the screen after the actions.' });
          break;
        case 'apply_patch_call_output':
          out.push({ role: 'tool', tool_call_id: String(item.call_id), content: `${item.status}${item.output ? `: ${item.output}` : ''}` });
          break;
        case 'compaction': {
          if (!ctx.unseal) throw unsupportedParameter(where, 'Compaction items are read only by this API, for the account that made them.');
          walk(ctx.unseal(item, where), () => where);
          break;
        }
        case 'item_reference': {
          const found = ctx.earlier.get(String(item.id));
          if (!found) throw invalidRequest(`No earlier item with id '${item.id}' is in this response's context.`, `${where}.id`);
          walk([found], () => where);
          break;
        }
        case 'mcp_approval_request': {
          // The call the model asked for, by the approval request's id, and right after it what it came to.
          addCall({ id: item.id, name: mcpFunctionName(String(item.server_label), String(item.name)), arguments: String(item.arguments) });
          out.push(ctx.approvals?.get(item.id) ?? { role: 'tool', tool_call_id: item.id, content: 'This call was not approved, so it did not run.' });
          break;
        }
        case 'mcp_approval_response':
          // Its outcome follows the request's call (approvalOutcomes).
          break;
        case 'mcp_call':
          // An approved call's result follows its request's call (approvalOutcomes).
          if (typeof item.approval_request_id === 'string') break;
          else {
            addCall({ id: item.id, name: mcpFunctionName(String(item.server_label), String(item.name)), arguments: String(item.arguments) });
            out.push({ role: 'tool', tool_call_id: item.id, content: mcpResult(item) });
          }
          break;
        default:
        // Reasoning, file search, web search and MCP tool listings add no content the model reads back.
      }
    });
  walk(items, (i) => `${base}[${i}]`);
  return out;
}
