// What the engine reads from a chat: the last user text, the instructions,
// attachments, and trailing tool results, each at most READ_CHARS of it (a file
// search's results SEARCH_READ_CHARS, a sandbox run's SANDBOX_READ_CHARS), and the
// fenced code blocks of the last user message.
import type { ChatMessage } from '../../types.ts';
import { isCodeToolName } from './code-interpreter.ts';
import { isShellName } from './command-intent.ts';
import { fencedBlocks, type Fence } from './fences.ts';
import { FILE_SEARCH_TOOL, SEARCH_READ_CHARS } from './file-search.ts';
import { WEB_READ_CHARS, WEB_TOOLS } from './web.ts';

/**
 * The engine's heuristics (answers, continuations, tool choice, hints) read at most
 * this much of a text, its start and its end: some of their expressions take time
 * quadratic in the text, and a prompt may be 10 MB. Tokens are still counted in full.
 */
export const READ_CHARS = 4_096;

/** `text`, or its start and end when it is longer than `max`. */
export function excerpt(text: string, max = READ_CHARS): string {
  if (text.length <= max) return text;
  return text.slice(0, max / 2) + '\n' + text.slice(-max / 2);
}

/**
 * Of a code_interpreter or shell result (JSON, parsed whole to be read: linear, and
 * the sandbox keeps at most 64 KiB of each stream), and of the call's arguments (the
 * commands run), the engine reads this much from the start.
 */
export const SANDBOX_READ_CHARS = 131_072;

export interface ToolResult {
  /** The function name, found through the assistant's matching tool call. */
  name: string | undefined;
  content: string;
  /** The matching call's arguments (JSON text), when that call is in the conversation. */
  arguments?: string;
}

export interface Conversation {
  /** Text of the last user message ("" if none). */
  lastUserText: string;
  /** system and developer messages, joined. */
  instructions: string;
  attachments: { images: number; files: number; audio: number };
  /** Tool results that end the conversation (empty if the last message is not a tool result). */
  toolResults: ToolResult[];
  /** Fenced code blocks in the last user message's text parts (not its attached files). */
  fences: Fence[];
}

export function userText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    // A text file's content reads as part of the message.
    .flatMap((p) => (p.type === 'text' ? [p.text] : p.type === 'file' && p.text !== undefined ? [p.text] : []))
    .join('\n');
}

export function readConversation(messages: readonly ChatMessage[]): Conversation {
  const instructions: string[] = [];
  let lastUser: ChatMessage | undefined;
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') instructions.push(m.content);
    // A message that is only a context block (Codex's <environment_context>) is not what the user asked.
    else if (m.role === 'user' && !(lastUser && isContextBlock(m.content))) lastUser = m;
  }
  const attachments = { images: 0, files: 0, audio: 0 };
  if (lastUser && Array.isArray(lastUser.content)) {
    for (const p of lastUser.content) {
      if (p.type === 'image_url') attachments.images++;
      else if (p.type === 'file') attachments.files++;
      else if (p.type === 'input_audio') attachments.audio++;
    }
  }

  const toolResults: ToolResult[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role !== 'tool') break;
    const call = toolCallFor(messages, i, m.tool_call_id);
    const name = call?.name;
    const sandbox = name !== undefined && (isCodeToolName(name) || isShellName(name));
    // A file search's passages are read from the start, best first (file-search.ts).
    const content =
      name === FILE_SEARCH_TOOL
        ? m.content.slice(0, SEARCH_READ_CHARS)
        : name !== undefined && WEB_TOOLS.has(name)
          ? m.content.slice(0, WEB_READ_CHARS)
          : sandbox
            ? m.content.slice(0, SANDBOX_READ_CHARS)
            : excerpt(m.content);
    toolResults.unshift({ name, content, ...(sandbox ? { arguments: call!.arguments.slice(0, SANDBOX_READ_CHARS) } : {}) });
  }

  return {
    lastUserText: lastUser ? excerpt(userText(lastUser.content)) : '',
    instructions: excerpt(instructions.join('\n')),
    attachments,
    toolResults,
    fences: lastUser ? fencedBlocks(typedText(lastUser.content)) : [],
  };
}

/** The message's typed text: its text parts, without attached files' text. */
function typedText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

/** `<tag ...>...</tag>` and nothing else (only the first READ_CHARS are looked at). */
function isContextBlock(content: ChatMessage['content']): boolean {
  const text = typeof content === 'string' ? content : userText(content);
  return /^\s*<([A-Za-z_][\w-]*)[^>]*>/.test(text) && /<\/[A-Za-z_][\w-]*>\s*$/.test(text.slice(-READ_CHARS));
}

function toolCallFor(messages: readonly ChatMessage[], before: number, callId: string): { name: string; arguments: string } | undefined {
  for (let i = before - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role === 'assistant' && m.tool_calls) {
      const call = m.tool_calls.find((c) => c.id === callId);
      if (call) return call;
    }
  }
  return undefined;
}
