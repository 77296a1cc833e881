// Responses items as the service keeps and returns them (SPEC "Response"): every item
// has an id (the caller's when it sent one, else ours with the reference's prefix) and
// a message's content is always a list of parts. Input items, output items and
// conversation items all pass through here, so a stored chain, an input-item list and a
// conversation show the same item the same way.
import { newId } from '../../ids.ts';

export type Item = Record<string, unknown> & { type: string; id: string };

/** Id prefixes by item type, as the reference's ids look. */
const PREFIX: Record<string, string> = {
  message: 'msg_',
  function_call: 'fc_',
  function_call_output: 'fco_',
  custom_tool_call: 'ctc_',
  custom_tool_call_output: 'ctco_',
  reasoning: 'rs_',
  compaction: 'cmp_',
  shell_call: 'sh_',
  shell_call_output: 'sho_',
  computer_call: 'cu_',
  computer_call_output: 'cuo_',
  apply_patch_call: 'apc_',
  apply_patch_call_output: 'apco_',
  mcp_approval_response: 'mcpr_',
  file_search_call: 'fs_',
  code_interpreter_call: 'ci_',
  web_search_call: 'ws_',
  image_generation_call: 'ig_',
  mcp_call: 'mcp_',
  mcp_list_tools: 'mcpl_',
  mcp_approval_request: 'mcpr_',
};

export function newItemId(type: string): string {
  return newId(PREFIX[type] ?? 'item_');
}

/** A new call id, as models give them (`call_...`). */
export function newCallId(): string {
  return newId('call_');
}

const textPart = (role: string, text: string) => ({ type: role === 'assistant' ? 'output_text' : 'input_text', text, ...(role === 'assistant' ? { annotations: [] } : {}) });

/** One checked input item as it is kept: an id, a type, message content as parts. */
export function toItem(raw: Record<string, unknown>): Item {
  const type = typeof raw.type === 'string' ? raw.type : 'message';
  const item: Record<string, unknown> = { ...raw, type };
  if (typeof item.id !== 'string' || item.id === '') item.id = newItemId(type);
  if (type === 'message') {
    const role = String(item.role);
    if (typeof item.content === 'string') item.content = [textPart(role, item.content)];
    item.status ??= 'completed';
  }
  if (type === 'function_call_output') item.status ??= 'completed';
  return item as Item;
}

/** `input` (text, or a list of items) as kept items: text is one user message. */
export function inputItems(input: unknown): Item[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [toItem({ type: 'message', role: 'user', content: input })];
  return (input as Record<string, unknown>[]).map(toItem);
}

/** The text of a message item's parts (input_text, output_text, text). */
export function messageText(item: Record<string, unknown>): string {
  const content = item.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const p of content) if (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string') out += (p as { text: string }).text;
  return out;
}

/**
 * An item as it is shown: a file search's results only when `include` asks for
 * `file_search_call.results`, a code run's logs only with `code_interpreter_call.outputs`
 * (both are always kept, so a later read with include shows them).
 */
export function shownItem(item: Item, include: readonly string[] | null | undefined): Item {
  if (item.type === 'file_search_call' && item.results != null && !include?.includes('file_search_call.results')) return { ...item, results: null };
  if (item.type === 'code_interpreter_call' && item.outputs != null && !include?.includes('code_interpreter_call.outputs')) return { ...item, outputs: null };
  return item;
}

/** A response object as it is shown (its output items through `shownItem`). */
export function shownResponse(response: Record<string, any>, include: readonly string[] | null | undefined): Record<string, any> {
  if (!Array.isArray(response.output)) return response;
  return { ...response, output: (response.output as Item[]).map((i) => shownItem(i, include)) };
}

/**
 * Items as a listing shows them: an input image's URL only when `include` asks for
 * `message.input_image.image_url` (the reference leaves it out otherwise; a data URL
 * can be megabytes), a file search's results only with `file_search_call.results`.
 */
export function forListing(items: readonly Item[], include: readonly string[] | null | undefined): Item[] {
  const images = include?.includes('message.input_image.image_url') === true;
  return items.map((listed) => {
    const item = shownItem(listed, include);
    if (images || item.type !== 'message' || !Array.isArray(item.content) || !item.content.some((p: any) => p?.type === 'input_image' && p.image_url != null)) return item;
    return { ...item, content: item.content.map((p: any) => (p?.type === 'input_image' && p.image_url != null ? { ...p, image_url: null } : p)) };
  });
}
