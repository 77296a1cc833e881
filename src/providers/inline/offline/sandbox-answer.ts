// The answers after a sandbox run, from what it really printed: the service's
// code_interpreter (its result is JSON: status, exit_code, timed_out, stdout, stderr,
// files), and a shell tool (the hosted or local shell's entries, one per command,
// Codex's exec_command text, or plain text). Every part is clipped, so an answer stays
// bounded whatever the run printed.
import { arithmeticOf, DATA_PROGRAM_MARK, FIGURE_LABELS } from './data-program.ts';
import type { ToolResult } from './conversation.ts';

/** Commands of one shell call the answer goes through; the rest are counted. */
const MAX_COMMANDS = 20;
/** Files of one run the answer links to; the rest are counted. */
const MAX_FILES = 10;

export function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max) + '…';
}

/** The end of `text`: an error's last lines say what went wrong. */
function clipEnd(text: string, max: number): string {
  return text.length <= max ? text : '…' + text.slice(-max);
}

/** `text` in a fenced block whose fence no run of backticks in it can close. */
export function codeBlock(text: string): string {
  const longest = Math.max(0, ...(text.match(/`{3,}/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}\n${text}\n${fence}`;
}

/** `text` as inline code, on one line. */
function inlineCode(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const longest = Math.max(0, ...(line.match(/`+/g) ?? []).map((r) => r.length));
  const ticks = '`'.repeat(longest + 1);
  return longest > 0 ? `${ticks} ${line} ${ticks}` : `${ticks}${line}${ticks}`;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const parse = (text: string | undefined): unknown => {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// --- code_interpreter -------------------------------------------------------

export interface CodeRun {
  status: 'completed' | 'timed_out' | 'failed';
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The first MAX_FILES files it wrote. */
  files: { path: string; link: string }[];
  /** How many more it wrote. */
  moreFiles: number;
}

/** A code_interpreter result, or undefined when `content` is not one. */
export function readCodeRun(content: string): CodeRun | undefined {
  const v = parse(content);
  if (!isObject(v) || (v.status !== 'completed' && v.status !== 'timed_out' && v.status !== 'failed')) return undefined;
  const listed = Array.isArray(v.files) ? v.files.filter(isObject) : [];
  const timedOut = v.status === 'timed_out' || v.timed_out === true;
  return {
    status: timedOut ? 'timed_out' : v.status,
    exitCode: typeof v.exit_code === 'number' ? v.exit_code : null,
    stdout: str(v.stdout),
    stderr: str(v.stderr),
    files: listed.slice(0, MAX_FILES).map((f) => ({ path: str(f.path), link: str(f.link) })),
    moreFiles: Math.max(0, listed.length - MAX_FILES),
  };
}

/** A Markdown link to a file the run wrote, with its sandbox: link as given. */
function fileLink(file: { path: string; link: string }): string {
  const name = clip(file.path.startsWith('/mnt/data/') ? file.path.slice('/mnt/data/'.length) : file.path, 200).replace(/[\\[\]`*_<>]/g, '\\$&');
  if (/^[^\s()<>]+$/.test(file.link)) return `[${name}](${file.link})`;
  // A destination in <> may hold spaces and parentheses, not <, > or line breaks.
  if (file.link !== '' && !/[<>\r\n]/.test(file.link)) return `[${name}](<${file.link}>)`;
  return name;
}

function filesLine(run: CodeRun): string | undefined {
  if (run.files.length === 0) return undefined;
  return `Files it wrote: ${run.files.map(fileLink).join(', ')}${run.moreFiles > 0 ? ` and ${run.moreFiles} more` : ''}.`;
}

const FIGURE_START = new RegExp(`^(?:${Object.values(FIGURE_LABELS).join('|')})\\b`);

/** "total amount: 60" → "The total amount is 60." (the summary program's first line). */
export function figureSentence(line: string): string | undefined {
  const at = line.lastIndexOf(': ');
  if (at <= 0 || !FIGURE_START.test(line)) return undefined;
  const value = line.slice(at + 2).trim();
  return value === '' ? undefined : `The ${line.slice(0, at)} is ${value}.`;
}

/** The code a code_interpreter call ran, from its arguments. */
function codeOf(args: string | undefined): string | undefined {
  const v = parse(args);
  return isObject(v) && typeof v.code === 'string' ? v.code : undefined;
}

/**
 * The answer after a code_interpreter run: the figure asked for or the arithmetic's
 * value when the engine wrote the program, what it printed, how it ended when not
 * normally, and links to the files it wrote.
 */
export function codeInterpreterAnswer(result: ToolResult, maxChars: number): string {
  const run = readCodeRun(result.content);
  if (!run) return `The tool returned: ${clip(result.content, maxChars)}`;
  if (run.status === 'failed') return `The code could not run: ${clip(run.stderr.trim() || 'no reason was given.', maxChars)}`;
  const code = codeOf(result.arguments);
  const stdout = run.stdout.trimEnd();
  const ok = run.status === 'completed' && run.exitCode === 0;

  const expression = code === undefined ? undefined : arithmeticOf(code);
  if (ok && expression !== undefined && stdout !== '' && !stdout.includes('\n')) {
    return [`${expression} = ${clip(stdout.trim(), maxChars)}.`, filesLine(run)].filter(Boolean).join('\n\n');
  }

  const parts: (string | undefined)[] = [];
  if (ok && code?.startsWith(DATA_PROGRAM_MARK)) {
    const end = stdout.indexOf('\n');
    parts.push(figureSentence(stdout.slice(0, Math.min(end < 0 ? stdout.length : end, 1000))));
  }
  if (run.status === 'timed_out') {
    parts.push('The code was stopped at the time limit.', stdout === '' ? undefined : `Before that it printed:\n${codeBlock(clip(stdout, maxChars))}`);
  } else {
    parts.push(stdout === '' ? 'The code ran and printed nothing.' : `The code printed:\n${codeBlock(clip(stdout, maxChars))}`);
    if (run.exitCode !== 0 && run.exitCode !== null) {
      const stderr = run.stderr.trimEnd();
      parts.push(`It exited with code ${run.exitCode}.` + (stderr === '' ? '' : ` Its error output ends:\n${codeBlock(clipEnd(stderr, maxChars))}`));
    }
  }
  parts.push(filesLine(run));
  return parts.filter((p): p is string => p !== undefined).join('\n\n');
}

// --- shell --------------------------------------------------------------------

export interface CommandRun {
  /** What it printed: stdout (else stderr), and stderr too when it failed. */
  printed: string;
  /** Undefined when the result does not say. */
  exitCode?: number;
  timedOut: boolean;
}

/**
 * What a command printed, from a shell tool's result: the Responses shell output
 * entries (stdout, else stderr), an object with `output`/`stdout`, the `Output:` section
 * Codex's exec_command result ends with, or the text itself.
 */
export function commandOutput(content: string): string {
  const v = parse(content);
  if (Array.isArray(v)) return v.map((e) => (isObject(e) ? str(e.stdout) || str(e.stderr) : '')).join('');
  if (isObject(v)) {
    if (typeof v.output === 'string') return v.output;
    if (typeof v.stdout === 'string') return v.stdout;
  }
  const section = /(?:^|\n)Output:\n([\s\S]*)$/.exec(content);
  return section ? section[1]! : content;
}

/** Each command's run, from the entries the hosted and local shell return; else one run. */
export function readCommandRuns(content: string): CommandRun[] {
  const v = parse(content);
  if (Array.isArray(v) && v.length > 0 && v.every(isObject)) {
    return v.map((e) => {
      const stdout = str(e.stdout);
      const stderr = str(e.stderr);
      const outcome = isObject(e.outcome) ? e.outcome : {};
      const timedOut = outcome.type === 'timeout';
      const exitCode = typeof outcome.exit_code === 'number' ? outcome.exit_code : undefined;
      const failed = timedOut || (exitCode !== undefined && exitCode !== 0);
      const printed = failed && stdout.trim() !== '' && stderr.trim() !== '' ? `${stdout.trimEnd()}\n${stderr}` : stdout || stderr;
      return { printed, timedOut, ...(exitCode !== undefined ? { exitCode } : {}) };
    });
  }
  // Codex's exec_command: "Process exited with code N" above the Output: section.
  const codex = /(?:^|\n)Process exited with code (\d{1,5})\n/.exec(content.slice(0, 1000));
  return [{ printed: commandOutput(content), timedOut: false, ...(codex ? { exitCode: Number(codex[1]) } : {}) }];
}

/** The commands a shell call ran, as its arguments give them. */
function commandsOf(args: string | undefined): string[] {
  const v = parse(args);
  if (!isObject(v)) return [];
  for (const key of ['commands', 'command', 'cmd', 'script']) {
    const c = v[key];
    if (typeof c === 'string') return [c];
    if (Array.isArray(c) && c.every((x) => typeof x === 'string')) {
      const list = c as string[];
      if (key === 'commands') return list;
      // An argv: `bash -lc <script>` shows as the script.
      const [shell = '', flag = '', script = ''] = list;
      return [list.length === 3 && /^(?:ba)?sh$/.test(shell) && /^-l?c$/.test(flag) ? script : list.join(' ')];
    }
  }
  return [];
}

/** "printed: hi", "exited with code 3 and printed nothing.", "timed out after printing: …". */
function outcomeText(run: CommandRun, max: number): string {
  const printed = run.printed.trim();
  const out = clip(printed, max);
  if (run.timedOut) return printed ? `timed out after printing: ${out}` : 'timed out and printed nothing.';
  if (run.exitCode !== undefined && run.exitCode !== 0) return printed ? `exited with code ${run.exitCode} and printed: ${out}` : `exited with code ${run.exitCode} and printed nothing.`;
  return printed ? `printed: ${out}` : 'ran and printed nothing.';
}

/** The answer after a shell call: each command's output and, when not 0, how it ended. */
export function shellAnswer(result: ToolResult, maxChars: number): string {
  const runs = readCommandRuns(result.content);
  if (runs.length === 1) return `The command ${outcomeText(runs[0]!, maxChars)}`;
  const commands = commandsOf(result.arguments);
  const each = Math.max(100, Math.floor(maxChars / Math.min(runs.length, MAX_COMMANDS)));
  const lines = runs.slice(0, MAX_COMMANDS).map((run, i) => {
    const command = commands.length === runs.length ? inlineCode(clip(commands[i]!, 100)) : `Command ${i + 1}`;
    return `${i + 1}. ${command} ${outcomeText(run, each)}`;
  });
  if (runs.length > MAX_COMMANDS) lines.push(`(${runs.length - MAX_COMMANDS} more commands are not shown.)`);
  return `The commands ran in order:\n${lines.join('\n')}`;
}
