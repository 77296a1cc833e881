// Client-run tools the offline engine uses when asked: a command to run (Codex's
// `exec_command`, a `shell` tool, the Responses local shell), a file to create or edit
// (an `apply_patch` function or a freeform patch tool), a screen to look at (`computer`).
// Each intent is read from the last user message only, and fills the tool's own schema
// (a command as a string, an argv array or a list of commands), so a real client runs
// exactly what the user asked for.
import type { FunctionTool } from '../../types.ts';
import { proseOnly } from './fences.ts';

const SHELL_NAME = /^(?:exec_command|shell|local_shell|bash|sh|run_command|run_shell|run_shell_command|execute_command|execute|terminal|run_terminal_cmd|run_in_terminal|container_exec)$/i;
const SHELL_WORDS = /shell|exec|command|bash|terminal/i;
const PATCH_NAME = /patch|edit_file|write_file|create_file/i;

type Schema = { type?: unknown; enum?: unknown; properties?: Record<string, Schema>; required?: unknown; items?: Schema };

const props = (t: FunctionTool): Record<string, Schema> => ((t.parameters as Schema | undefined)?.properties ?? {}) as Record<string, Schema>;

/** The property of a shell-like tool that holds the command, and its form. */
function commandParam(t: FunctionTool): { name: string; form: 'string' | 'argv' | 'list' } | undefined {
  const p = props(t);
  for (const name of ['cmd', 'command', 'commands', 'script']) {
    const s = p[name];
    // A `command` of fixed values names an operation (a text editor's `view`), not something to run.
    if (!s || Array.isArray(s.enum)) continue;
    if (s.type === 'array') return { name, form: name === 'commands' ? 'list' : 'argv' };
    return { name, form: 'string' };
  }
  return undefined;
}

/** Is this the name of a tool that runs commands? */
export function isShellName(name: string): boolean {
  return SHELL_NAME.test(name) || SHELL_WORDS.test(name);
}

export function shellTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => SHELL_NAME.test(t.name) && commandParam(t)) ?? tools.find((t) => SHELL_WORDS.test(t.name) && commandParam(t));
}

const unquote = (s: string) => s.trim().replace(/^["'“”‘’]+|["'“”‘’.,;:!?]+$/g, '').trim();

/**
 * The command a message asks to run, or undefined. "Run `ls -la`", "run the shell
 * command echo with the word MANGO" (→ `echo MANGO`), "execute date and tell me".
 */
export function commandFrom(message: string): string | undefined {
  if (!/\b(?:run|execute|exec)\b|\buse the (?:shell|terminal)\b/i.test(message)) return undefined;
  const withWord = (cmd: string, rest: string) => {
    const m = /^\s*(?:with|using)\s+(?:the\s+)?(?:word|argument|text|string)s?\s+["'“‘]?([^\s"'”’.,;!?]+)/i.exec(rest);
    return m ? `${cmd} ${m[1]}` : cmd;
  };
  const ticked = /`([^`\n]{1,500})`/.exec(message);
  if (ticked) return withWord(ticked[1]!.trim(), message.slice(ticked.index + ticked[0].length));
  const said = /\b(?:run|execute|exec)\s+(?:the\s+|this\s+)?(?:(?:shell|bash|terminal)\s+)?(?:command\s*:?\s*)?(.{1,500}?)(?=\s+(?:and|then)\b|[.?!;\n]|$)/i.exec(message);
  if (!said) return undefined;
  let cmd = unquote(said[1]!);
  const word = /^(.+?)\s+(?:with|using)\s+(?:the\s+)?(?:word|argument|text|string)s?\s+["'“‘]?([^\s"'”’.,;!?]+)/i.exec(cmd);
  if (word) cmd = `${word[1]} ${word[2]}`;
  cmd = cmd.replace(/\s+(?:in|on|from|using|with)\s+(?:the\s+)?(?:shell|terminal|bash|command line)$/i, '').trim();
  return cmd === '' || /^(?:it|this|that|the command)$/i.test(cmd) ? undefined : cmd;
}

/** The tool's arguments for a command, in the form its schema asks for. */
export function commandArguments(tool: FunctionTool, command: string, timeoutMs?: number): Record<string, unknown> {
  return shellArguments(tool, [command], timeoutMs);
}

/**
 * The tool's arguments for commands run in order: a list of them when the schema takes
 * one, else one script of them. `timeout_ms` only when the schema has it.
 */
export function shellArguments(tool: FunctionTool, commands: readonly string[], timeoutMs?: number): Record<string, unknown> {
  const param = commandParam(tool)!;
  const script = commands.join('\n');
  const value = param.form === 'list' ? [...commands] : param.form === 'string' ? script : ['bash', '-lc', script];
  return { [param.name]: value, ...(timeoutMs !== undefined && props(tool).timeout_ms ? { timeout_ms: timeoutMs } : {}) };
}

const TIMEOUT_UNITS: Record<string, number> = { ms: 1, msec: 1, msecs: 1, millisecond: 1, milliseconds: 1, s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000, m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000 };
const UNIT = 'ms|msecs?|milliseconds?|s|secs?|seconds?|m|mins?|minutes?';
/** "with a timeout of 2 seconds", "timeout 500 ms", "a time limit of 1 s", "a 3 second timeout". */
const TIMEOUT = new RegExp(
  String.raw`\b(?:with\s{1,3})?(?:an?\s{1,3})?(?:(?:time[\s-]?out|time limit)\s{0,3}(?:of\s{1,3}|[:=]\s{0,3})?(\d{1,7}(?:\.\d{1,3})?)\s{0,3}(${UNIT})|(\d{1,7}(?:\.\d{1,3})?)[\s-]{0,3}(${UNIT})\s{1,3}(?:time[\s-]?out|time limit))\b`,
  'i',
);

/**
 * A time limit the message's prose asks for, in whole milliseconds, and the message
 * without those words (so "run sleep 5 with a timeout of 2 s" runs `sleep 5`). Words in
 * code spans and fenced blocks are commands, not a request (`timeout 5s sleep 9`).
 */
export function timeoutFrom(message: string): { ms: number; rest: string } | undefined {
  const m = TIMEOUT.exec(proseOnly(message));
  if (!m) return undefined;
  const ms = Math.max(1, Math.round(Number(m[1] ?? m[3]) * TIMEOUT_UNITS[(m[2] ?? m[4])!.toLowerCase()]!));
  return { ms, rest: message.slice(0, m.index) + message.slice(m.index + m[0].length) };
}

// --- Files ----------------------------------------------------------------

export function patchTool(tools: readonly FunctionTool[]): { tool: FunctionTool; form: 'operation' | 'freeform' } | undefined {
  for (const t of tools) {
    if (!PATCH_NAME.test(t.name) && !/\bpatch\b/i.test(t.description ?? '')) continue;
    const p = props(t);
    if (p.type && p.path) return { tool: t, form: 'operation' };
    const strings = Object.entries(p).filter(([, s]) => s.type === 'string');
    if (strings.length === 1 && Object.keys(p).length === 1) return { tool: t, form: 'freeform' };
  }
  return undefined;
}

export interface FileEdit {
  kind: 'create' | 'append';
  path: string;
  lines: string[];
}

const PATH = String.raw`([\w./-]+\.[A-Za-z0-9]{1,8}|[\w-]+/[\w./-]+)`;
const TEXT = String.raw`["'“‘]([^"'”’\n]{0,2000})["'”’]|(.{1,2000}?)(?:[.!?]\s*$|$)`;

/** A file the message asks to create or change, or undefined. */
export function fileEditFrom(message: string): FileEdit | undefined {
  const create = new RegExp(String.raw`\b(?:create|write|make|add)\s+(?:a\s+|the\s+|new\s+)*(?:file\s+)?(?:called\s+|named\s+)?${PATH}\s+(?:containing|with(?:\s+the)?\s+(?:content|text|contents)|that\s+says|saying|with)\s*:?\s*(?:${TEXT})`, 'i').exec(message);
  if (create) return { kind: 'create', path: create[1]!, lines: (create[2] ?? create[3] ?? '').split('\n') };
  const writeTo = new RegExp(String.raw`\bwrite\s+["'“‘]([^"'”’\n]{0,2000})["'”’]\s+(?:to|into)\s+(?:the\s+)?(?:file\s+)?${PATH}`, 'i').exec(message);
  if (writeTo) return { kind: 'create', path: writeTo[2]!, lines: (writeTo[1] ?? '').split('\n') };
  const append = new RegExp(String.raw`\b(?:add|append)\s+(?:a\s+|the\s+)?line\s*:?\s*(?:["'“‘]([^"'”’\n]{0,2000})["'”’]|(\S.{0,2000}?))\s+(?:to|at the end of)\s+(?:the\s+)?(?:file\s+)?${PATH}`, 'i').exec(message);
  if (append) return { kind: 'append', path: append[3]!, lines: [append[1] ?? append[2] ?? ''] };
  return undefined;
}

/** A V4A diff body: every line added (a new file), or one hunk adding lines at the end. */
export function v4aDiff(edit: FileEdit): string {
  const added = edit.lines.map((l) => `+${l}`).join('\n');
  return edit.kind === 'create' ? `${added}\n` : `@@\n${added}\n`;
}

/** A whole V4A patch, as freeform patch tools (Codex's apply_patch) take it. */
export function v4aPatch(edit: FileEdit): string {
  const header = edit.kind === 'create' ? `*** Add File: ${edit.path}` : `*** Update File: ${edit.path}`;
  return `*** Begin Patch\n${header}\n${v4aDiff(edit)}*** End Patch\n`;
}

/**
 * A text editor tool (the messages surface's text_editor_code_execution, or a client's
 * str_replace_based_edit_tool): `command` one of its operations, `path` the file.
 */
export function textEditorTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => {
    const p = props(t);
    return Array.isArray(p.command?.enum) && (p.command.enum as unknown[]).includes('str_replace') && p.path !== undefined;
  });
}

const QUOTED_TEXT = String.raw`["'“‘\x60]([^"'”’\x60\n]{0,2000})["'”’\x60]`;

/** The editor operation a message asks for: a file to create, a text to replace in one, a file to view; else undefined. */
export function editorArgumentsFrom(message: string): Record<string, unknown> | undefined {
  const edit = fileEditFrom(message);
  if (edit?.kind === 'create') return { command: 'create', path: edit.path, file_text: edit.lines.join('\n') };
  const replace = new RegExp(String.raw`\breplace\s+${QUOTED_TEXT}\s+with\s+${QUOTED_TEXT}\s+in\s+(?:the\s+)?(?:file\s+)?${PATH}`, 'i').exec(message);
  if (replace && replace[1] !== '') return { command: 'str_replace', path: replace[3], old_str: replace[1], new_str: replace[2] };
  const view = new RegExp(String.raw`\b(?:view|show(?:\s+me)?|display|open|read|cat|print)\s+(?:the\s+)?(?:contents?\s+of\s+(?:the\s+)?)?(?:file\s+)?${PATH}`, 'i').exec(message);
  if (view) return { command: 'view', path: view[1] };
  return undefined;
}

export function patchArguments(found: { tool: FunctionTool; form: 'operation' | 'freeform' }, edit: FileEdit): Record<string, unknown> {
  if (found.form === 'freeform') return { [Object.keys(props(found.tool))[0]!]: v4aPatch(edit) };
  return { type: edit.kind === 'create' ? 'create_file' : 'update_file', path: edit.path, diff: v4aDiff(edit) };
}

// --- Screen ---------------------------------------------------------------

export function computerTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => /^computer/i.test(t.name) && props(t).actions);
}

/** Screen actions the message asks for, or undefined. */
export function screenActionsFrom(message: string): Record<string, unknown>[] | undefined {
  const click = /\b(double[- ]?click|click)\b[^\d]{0,40}?(\d{1,5})\s*[, ]\s*(\d{1,5})/i.exec(message);
  if (click) return [{ type: /double/i.test(click[1]!) ? 'double_click' : 'click', x: Number(click[2]), y: Number(click[3]), ...(/double/i.test(click[1]!) ? {} : { button: 'left' }) }];
  const type = /\btype\s+["'“‘]([^"'”’\n]{1,500})["'”’]/i.exec(message);
  if (type) return [{ type: 'type', text: type[1] }];
  if (/\b(?:screenshot|screen ?shot|look at (?:the|my) screen|what(?:'s| is) on (?:the|my) screen)\b/i.test(message)) return [{ type: 'screenshot' }];
  return undefined;
}
