// The two tools of the messages surface's later code execution versions
// (code_execution_20250825 and after): `bash_code_execution` runs a bash command and
// `text_editor_code_execution` views, creates and edits a file, both in the request's
// container on the same sandbox as code_interpreter. What they did is kept as neutral
// data (BashRunData, TextEditorData) that the surface turns into its own blocks.
import { ApiError } from '../../errors.ts';
import type { FunctionTool } from '../../providers/types.ts';
import type { RunResult } from '../../sandbox/types.ts';
import { argumentsObject, type AgentTool, type ToolOutput } from '../types.ts';
import { exitCodeOf, head, STDERR_CHARS, STDOUT_CHARS, tail, type ContainerLease, type ContainerRunner, type ContainerToolLog, type WrittenFile } from './container-tool.ts';

export const BASH_CODE_EXECUTION_NAME = 'bash_code_execution';
export const TEXT_EDITOR_CODE_EXECUTION_NAME = 'text_editor_code_execution';

/** An edit longer than this is refused without running (a model runaway). */
const MAX_INPUT_CHARS = 1024 * 1024;
/** A command goes to bash as an argument, which Linux takes up to 128 KiB long. */
const MAX_COMMAND_BYTES = 120 * 1024;
/** What a view shows of a file, at most (the model is told when there is more). */
const VIEW_CHARS = STDOUT_CHARS;
/** Lines a str_replace result lists, at most. */
const DIFF_LINES = 400;

export interface BashRunData {
  kind: 'bash';
  containerId: string;
  command: string;
  /** completed: it ran to an exit (any code); timed_out: stopped at the time limit; invalid: no command to run; failed: it could not run. */
  status: 'completed' | 'timed_out' | 'invalid' | 'failed';
  stdout: string;
  stderr: string;
  exitCode: number | null;
  files: WrittenFile[];
}

export type TextEditorResult =
  | { type: 'view'; fileType: 'text' | 'image' | 'pdf'; content: string; numLines: number | null; startLine: number | null; totalLines: number | null }
  | { type: 'create'; isFileUpdate: boolean }
  | { type: 'str_replace'; oldStart: number; oldLines: number; newStart: number; newLines: number; lines: string[] }
  | { type: 'error'; code: 'invalid_tool_input' | 'unavailable' | 'execution_time_exceeded' | 'file_not_found'; message: string };

export interface TextEditorData {
  kind: 'text_editor';
  containerId: string;
  result: TextEditorResult;
  files: WrittenFile[];
}

function bashDefinition(timeoutMs: number): FunctionTool {
  return {
    name: BASH_CODE_EXECUTION_NAME,
    description:
      'Runs a bash command in a sandboxed Linux container with no network access and returns what it printed and its exit code. ' +
      'The working directory is /mnt/data, which holds the user\'s files; Python 3 (standard library) is installed. ' +
      `Only files under /mnt/data persist between commands. Each command runs at most ${Math.round(timeoutMs / 1000)} seconds.`,
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', description: 'the bash command (or script) to run' } },
      required: ['command'],
    },
  };
}

const TEXT_EDITOR_DEFINITION: FunctionTool = {
  name: TEXT_EDITOR_CODE_EXECUTION_NAME,
  description:
    'Views, creates and edits text files in the same container as bash_code_execution. `view` shows a file (`view_range` [first, last] for some of its lines; a directory lists its files); ' +
    '`create` writes `file_text` to `path`, replacing a file there; `str_replace` replaces the one occurrence of `old_str` in the file with `new_str`. ' +
    'A relative path is under /mnt/data; only files under /mnt/data persist.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', enum: ['view', 'create', 'str_replace'] },
      path: { type: 'string', description: 'the file (relative to /mnt/data, or absolute)' },
      file_text: { type: 'string', description: 'create: the whole content' },
      old_str: { type: 'string', description: 'str_replace: the exact text to replace, found once in the file' },
      new_str: { type: 'string', description: 'str_replace: the text to put in its place' },
      view_range: { type: 'array', items: { type: 'integer' }, description: 'view: the first and last line (1-based; -1 for the end)' },
    },
    required: ['command', 'path'],
  },
};

/** The command of a call's arguments. */
export function bashCommandOf(argumentsJson: string): string {
  const command = argumentsObject(argumentsJson).command;
  return typeof command === 'string' ? command : '';
}

/** The model's reading of a run: the container shell's entry (stdout, stderr, how it ended), which the offline engine reads too. */
function bashText(data: BashRunData): string {
  const outcome = data.status === 'timed_out' ? { type: 'timeout' } : { type: 'exit', exit_code: data.exitCode ?? 1 };
  return JSON.stringify([{ stdout: head(data.stdout, STDOUT_CHARS), stderr: tail(data.stderr, STDERR_CHARS), outcome }]);
}

/** `bash_code_execution`: one command in its own bash, in the request's container. */
export function bashCodeExecutionTool(runtime: ContainerRunner, lease: ContainerLease, timeoutMs: number, log?: ContainerToolLog): AgentTool {
  return {
    definition: bashDefinition(timeoutMs),
    async run(argumentsJson, signal): Promise<ToolOutput> {
      const command = bashCommandOf(argumentsJson);
      const failed = (why: string, status: 'invalid' | 'failed' = 'failed'): ToolOutput => {
        const data: BashRunData = { kind: 'bash', containerId: lease.id, command, status, stdout: '', stderr: why, exitCode: null, files: [] };
        return { text: bashText(data), data };
      };
      if (command.trim() === '') return failed('No command was given: send it in `command`.', 'invalid');
      if (Buffer.byteLength(command) > MAX_COMMAND_BYTES) return failed(`The command is longer than ${MAX_COMMAND_BYTES} bytes and was not run: write a script with text_editor_code_execution and run that.`, 'invalid');
      let ran: { result: RunResult; written: WrittenFile[] };
      try {
        const row = await lease.get();
        signal.throwIfAborted();
        // An argument, not stdin: a command that reads its input must not read the script.
        ran = await runtime.run(row, { argv: ['/usr/bin/bash', '--noprofile', '--norc', '-c', command], signal });
        signal.throwIfAborted();
      } catch (err) {
        if (signal.aborted) throw err;
        log?.warn({ err, container: lease.id }, 'bash code execution failed');
        return failed(`The command could not run: ${err instanceof ApiError ? err.message : 'the container is not available'}.`);
      }
      const { result, written } = ran;
      const data: BashRunData = {
        kind: 'bash',
        containerId: lease.id,
        command,
        status: result.timedOut ? 'timed_out' : 'completed',
        stdout: result.stdout,
        stderr: result.stderr,
        exitCode: result.timedOut ? null : exitCodeOf(result),
        files: written,
      };
      return { text: bashText(data), data };
    },
  };
}

/**
 * The editor's work, done by Python in the container (so a path means what it means to
 * the command runs beside it, and nothing outside the sandbox is touched): the call's
 * arguments come base64-encoded in the program, its result is one JSON object on stdout.
 */
const EDITOR_PROGRAM = String.raw`
import base64, json, os, sys
A = json.loads(base64.b64decode(ARGS).decode('utf-8'))
VIEW_CHARS, DIFF_LINES = LIMITS
def done(o):
    sys.stdout.write(json.dumps(o, ensure_ascii=False))
    sys.exit(0)
def fail(code, message):
    done({'type': 'error', 'code': code, 'message': message})
cmd, path = A.get('command'), A.get('path')
if not isinstance(path, str) or path == '':
    fail('invalid_tool_input', 'path is required.')
try:
    if cmd == 'view':
        if os.path.isdir(path):
            names = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
                if root.count(os.sep) - path.rstrip(os.sep).count(os.sep) >= 2:
                    dirs[:] = []
                for f in sorted(files):
                    if not f.startswith('.'):
                        names.append(os.path.join(root, f))
            text = '\n'.join(names)
            done({'type': 'view', 'fileType': 'text', 'content': text[:VIEW_CHARS], 'numLines': None, 'startLine': None, 'totalLines': None})
        if not os.path.isfile(path):
            fail('file_not_found', 'The file %s does not exist.' % path)
        data = open(path, 'rb').read()
        ext = os.path.splitext(path)[1].lower()
        if ext in ('.png', '.jpg', '.jpeg', '.gif', '.webp', '.pdf'):
            done({'type': 'view', 'fileType': 'pdf' if ext == '.pdf' else 'image', 'content': base64.b64encode(data).decode('ascii')[:VIEW_CHARS * 4], 'numLines': None, 'startLine': None, 'totalLines': None})
        lines = data.decode('utf-8', 'replace').splitlines()
        first, last = 1, len(lines)
        r = A.get('view_range')
        if isinstance(r, list) and len(r) == 2 and all(isinstance(n, int) for n in r):
            first = max(1, r[0])
            last = len(lines) if r[1] == -1 else min(len(lines), r[1])
            if first > max(1, len(lines)) or last < first:
                fail('invalid_tool_input', 'view_range %s is outside the file\'s %d lines.' % (r, len(lines)))
        shown = '\n'.join(lines[first - 1:last])
        if len(shown) > VIEW_CHARS:
            shown = shown[:VIEW_CHARS] + '\n[... more: view a smaller view_range]'
        done({'type': 'view', 'fileType': 'text', 'content': shown, 'numLines': max(0, last - first + 1), 'startLine': first, 'totalLines': len(lines)})
    if cmd == 'create':
        text = A.get('file_text')
        if not isinstance(text, str):
            fail('invalid_tool_input', 'create needs file_text.')
        if os.path.isdir(path):
            fail('invalid_tool_input', '%s is a directory.' % path)
        existed = os.path.exists(path)
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        done({'type': 'create', 'isFileUpdate': existed})
    if cmd == 'str_replace':
        old, new = A.get('old_str'), A.get('new_str', '')
        if not isinstance(old, str) or old == '' or not isinstance(new, str):
            fail('invalid_tool_input', 'str_replace needs old_str (not empty) and new_str.')
        if not os.path.isfile(path):
            fail('file_not_found', 'The file %s does not exist.' % path)
        text = open(path, encoding='utf-8', errors='surrogateescape').read()
        count = text.count(old)
        if count != 1:
            fail('invalid_tool_input', ('old_str was not found in %s.' % path) if count == 0 else ('old_str occurs %d times in %s: include more of the text around it so it occurs once.' % (count, path)))
        at = text.index(old)
        with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(text[:at] + new + text[at + len(old):])
        start = text.count('\n', 0, at) + 1
        olds, news = old.split('\n'), new.split('\n')
        diff = ['-' + l for l in olds] + ['+' + l for l in news]
        done({'type': 'str_replace', 'oldStart': start, 'oldLines': len(olds), 'newStart': start, 'newLines': len(news), 'lines': diff[:DIFF_LINES]})
    fail('invalid_tool_input', 'command must be view, create or str_replace.')
except SystemExit:
    raise
except Exception as e:
    fail('invalid_tool_input', '%s: %s' % (type(e).__name__, e))
`;

/** The model's reading of an edit. */
function editorText(path: string, r: TextEditorResult): string {
  switch (r.type) {
    case 'view':
      return r.fileType === 'text' ? r.content : `${path} is a${r.fileType === 'image' ? 'n image' : ' PDF'} file.`;
    case 'create':
      return `${r.isFileUpdate ? 'Replaced' : 'Created'} the file ${path}.`;
    case 'str_replace':
      return `Replaced the text at line ${r.oldStart} of ${path}.`;
    case 'error':
      return `Error (${r.code}): ${r.message}`;
  }
}

/** `text_editor_code_execution`: view, create and str_replace, in the request's container. */
export function textEditorCodeExecutionTool(runtime: ContainerRunner, lease: ContainerLease, timeoutMs: number, log?: ContainerToolLog): AgentTool {
  return {
    definition: TEXT_EDITOR_DEFINITION,
    async run(argumentsJson, signal): Promise<ToolOutput> {
      const args = argumentsObject(argumentsJson);
      const path = typeof args.path === 'string' ? args.path : '';
      const output = (result: TextEditorResult, files: WrittenFile[] = []): ToolOutput => ({
        text: editorText(path, result),
        data: { kind: 'text_editor', containerId: lease.id, result, files } satisfies TextEditorData,
      });
      if (argumentsJson.length > MAX_INPUT_CHARS) return output({ type: 'error', code: 'invalid_tool_input', message: `The edit is longer than ${MAX_INPUT_CHARS} characters and was not made.` });
      const program = EDITOR_PROGRAM.replace('ARGS', () => `'${Buffer.from(JSON.stringify(args)).toString('base64')}'`).replace('LIMITS', () => `${VIEW_CHARS}, ${DIFF_LINES}`);
      let ran: { result: RunResult; written: WrittenFile[] };
      try {
        const row = await lease.get();
        signal.throwIfAborted();
        ran = await runtime.run(row, { argv: ['/usr/bin/python3', '-I', '-S', '-'], stdin: program, timeoutMs, maxOutputBytes: 256 * 1024, signal });
        signal.throwIfAborted();
      } catch (err) {
        if (signal.aborted) throw err;
        log?.warn({ err, container: lease.id }, 'text editor code execution failed');
        return output({ type: 'error', code: 'unavailable', message: `The edit could not run: ${err instanceof ApiError ? err.message : 'the container is not available'}.` });
      }
      const { result, written } = ran;
      if (result.timedOut) return output({ type: 'error', code: 'execution_time_exceeded', message: 'The edit was stopped at the time limit.' });
      let parsed: TextEditorResult;
      try {
        parsed = JSON.parse(result.stdout) as TextEditorResult;
      } catch {
        return output({ type: 'error', code: 'unavailable', message: `The edit did not finish: ${tail(result.stderr, 500) || 'no reason was given'}.` });
      }
      return output(parsed, written);
    },
  };
}
