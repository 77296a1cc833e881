// GET /responses/{id}?stream=true: a stored response's events, rebuilt from the stored
// object in the order the live stream sent them (each item added, its text in one
// delta, its annotations, its done events; a file search in progress, searching,
// completed; a code run's code, interpreting, completed; a container shell's commands and
// their outputs), numbered from 0; `starting_after` skips what a client has already seen.
// A background response that ran since issue 25 is followed from the events its run
// logged instead (event-log.ts); this is for the others, once they have ended.
import type { StreamEvent } from './output-builder.ts';
import type { Item } from './items.ts';

/** One finished item's events, as the live stream sent them (also how a response's items made before its model ran are streamed). */
export function itemEvents(item: Item, index: number): StreamEvent[] {
  const at = { item_id: item.id, output_index: index };
  switch (item.type) {
    case 'message': {
      const part = ((item.content as Record<string, unknown>[]) ?? [])[0] ?? { type: 'output_text', annotations: [], logprobs: [], text: '' };
      const text = String(part.text ?? '');
      const annotations = Array.isArray(part.annotations) ? part.annotations : [];
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', content: [] } },
        { type: 'response.content_part.added', ...at, content_index: 0, part: { ...part, text: '', annotations: [] } },
        ...(text ? [{ type: 'response.output_text.delta', ...at, content_index: 0, delta: text, logprobs: [] }] : []),
        ...annotations.map((annotation, i) => ({ type: 'response.output_text.annotation.added', ...at, content_index: 0, annotation_index: i, annotation })),
        { type: 'response.output_text.done', ...at, content_index: 0, text, logprobs: [] },
        { type: 'response.content_part.done', ...at, content_index: 0, part },
        { type: 'response.output_item.done', output_index: index, item },
      ];
    }
    case 'reasoning': {
      const part = ((item.summary as Record<string, unknown>[]) ?? [])[0] ?? { type: 'summary_text', text: '' };
      const text = String(part.text ?? '');
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, summary: [] } },
        { type: 'response.reasoning_summary_part.added', ...at, summary_index: 0, part: { ...part, text: '' } },
        ...(text ? [{ type: 'response.reasoning_summary_text.delta', ...at, summary_index: 0, delta: text }] : []),
        { type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text },
        { type: 'response.reasoning_summary_part.done', ...at, summary_index: 0, part },
        { type: 'response.output_item.done', output_index: index, item },
      ];
    }
    case 'function_call':
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, arguments: '', status: 'in_progress' } },
        ...(item.arguments ? [{ type: 'response.function_call_arguments.delta', ...at, delta: item.arguments }] : []),
        { type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments },
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'custom_tool_call':
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, input: '', status: 'in_progress' } },
        { type: 'response.custom_tool_call_input.delta', ...at, delta: item.input },
        { type: 'response.custom_tool_call_input.done', ...at, input: item.input },
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'file_search_call':
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', results: null } },
        { type: 'response.file_search_call.in_progress', ...at },
        { type: 'response.file_search_call.searching', ...at },
        ...(item.status === 'completed' ? [{ type: 'response.file_search_call.completed', ...at }] : []),
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'mcp_list_tools':
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, tools: [] } },
        { type: 'response.mcp_list_tools.in_progress', ...at },
        { type: item.error ? 'response.mcp_list_tools.failed' : 'response.mcp_list_tools.completed', ...at },
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'mcp_call':
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, arguments: '', status: 'in_progress', output: null, error: null } },
        { type: 'response.mcp_call.in_progress', ...at },
        ...(item.arguments ? [{ type: 'response.mcp_call_arguments.delta', ...at, delta: item.arguments }] : []),
        { type: 'response.mcp_call_arguments.done', ...at, arguments: item.arguments },
        { type: item.status === 'completed' ? 'response.mcp_call.completed' : 'response.mcp_call.failed', ...at },
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'mcp_approval_request':
      return [
        { type: 'response.output_item.added', output_index: index, item },
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'image_generation_call':
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', result: null } },
        { type: 'response.image_generation_call.in_progress', ...at },
        { type: 'response.image_generation_call.generating', ...at },
        ...(item.status === 'completed' ? [{ type: 'response.image_generation_call.completed', ...at }] : []),
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'web_search_call':
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress' } },
        { type: 'response.web_search_call.in_progress', ...at },
        { type: 'response.web_search_call.searching', ...at },
        ...(item.status === 'completed' ? [{ type: 'response.web_search_call.completed', ...at }] : []),
        { type: 'response.output_item.done', output_index: index, item },
      ];
    case 'code_interpreter_call': {
      const code = typeof item.code === 'string' ? item.code : '';
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', code: '', outputs: null } },
        { type: 'response.code_interpreter_call.in_progress', ...at },
        ...(code ? [{ type: 'response.code_interpreter_call_code.delta', ...at, delta: code }] : []),
        { type: 'response.code_interpreter_call_code.done', ...at, code },
        { type: 'response.code_interpreter_call.interpreting', ...at },
        ...(item.status === 'completed' ? [{ type: 'response.code_interpreter_call.completed', ...at }] : []),
        { type: 'response.output_item.done', output_index: index, item },
      ];
    }
    case 'shell_call': {
      // A container shell's call streams its commands; a local one is added and done.
      if ((item.environment as { type?: string } | null)?.type !== 'container_reference') break;
      const action = item.action as { commands: string[] };
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', action: { ...action, commands: [] } } },
        ...action.commands.flatMap((command, i) => [
          { type: 'response.shell_call_command.added', output_index: index, command_index: i, command: '' },
          ...(command ? [{ type: 'response.shell_call_command.delta', output_index: index, command_index: i, delta: command }] : []),
          { type: 'response.shell_call_command.done', output_index: index, command_index: i, command },
        ]),
        { type: 'response.output_item.done', output_index: index, item },
      ];
    }
    case 'shell_call_output': {
      const output = item.output as { stdout: string; stderr: string }[];
      return [
        { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', output: [] } },
        ...output.flatMap((o, i) => [
          { type: 'response.shell_call_output_content.delta', ...at, command_index: i, delta: { stdout: o.stdout, stderr: o.stderr } },
          { type: 'response.shell_call_output_content.done', ...at, command_index: i, output: [o] },
        ]),
        { type: 'response.output_item.done', output_index: index, item },
      ];
    }
    default:
  }
  return [
    { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress' } },
    { type: 'response.output_item.done', output_index: index, item },
  ];
}

const FINAL: Record<string, string> = { completed: 'response.completed', incomplete: 'response.incomplete', failed: 'response.failed', cancelled: 'response.failed' };

/** The event that ends a finished response's stream, numbered `seq`. */
export function finalEvent(response: Record<string, any>, seq: number): StreamEvent {
  return { type: FINAL[response.status] ?? 'response.completed', response, sequence_number: seq };
}

/** Every event of a finished response, numbered, after `startingAfter` when given. */
export function replayEvents(response: Record<string, any>, startingAfter?: number): StreamEvent[] {
  const opening: Record<string, any> = { ...response, status: 'in_progress', output: [], completed_at: null, incomplete_details: null, error: null };
  delete opening.usage;
  delete opening.svc;
  const events: StreamEvent[] = [
    { type: 'response.created', response: opening },
    { type: 'response.in_progress', response: opening },
    ...((response.output ?? []) as Item[]).flatMap(itemEvents),
    { type: FINAL[response.status] ?? 'response.completed', response },
  ];
  return events.map((e, i) => ({ ...e, sequence_number: i })).filter((e) => startingAfter === undefined || e.sequence_number > startingAfter);
}
