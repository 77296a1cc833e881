// The code_interpreter hosted tool (SPEC "Hosted tools in /responses"): a Python 3
// program (standard library) run in the request's container, its output read back by
// the model and shown on a `code_interpreter_call` item.
import { ApiError } from '../../errors.ts';
import type { FunctionTool } from '../../providers/types.ts';
import type { RunResult } from '../../sandbox/types.ts';
import { argumentsObject, type AgentTool, type ToolOutput } from '../types.ts';
import { CODE_INTERPRETER_FUNCTION_NAME, exitCodeOf, head, STDERR_CHARS, STDOUT_CHARS, tail, type ContainerLease, type ContainerRunner, type ContainerToolLog, type WrittenFile } from './container-tool.ts';

/** A program longer than this is refused without running (a model runaway, not code). */
const MAX_CODE_CHARS = 256 * 1024;

export interface CodeInterpreterData {
  containerId: string;
  code: string;
  /** completed: it ran to an exit (any code); failed: it could not run or was stopped at the time limit. */
  status: 'completed' | 'failed';
  logs: string;
  files: WrittenFile[];
}

function codeDefinition(timeoutMs: number): FunctionTool {
  return {
    name: CODE_INTERPRETER_FUNCTION_NAME,
    description:
      `Runs a Python 3 program (standard library only) in a sandboxed container with no network access and returns what it printed. ` +
      `The working directory is /mnt/data, which holds the user's files; files the program writes there are given to the user: link each as sandbox:/mnt/data/<name>. ` +
      `Only files in /mnt/data persist between calls. Each program runs at most ${Math.round(timeoutMs / 1000)} seconds.`,
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: 'the whole Python program; print what you need to see' } },
      required: ['code'],
    },
  };
}

/** The code of a call's arguments (what the item shows). */
export function codeOf(argumentsJson: string): string {
  const code = argumentsObject(argumentsJson).code;
  return typeof code === 'string' ? code : '';
}

/** The program's printed output as the item's logs: stdout, then stderr. */
function logsOf(r: RunResult): string {
  const parts = [r.stdout, r.stderr].filter((s) => s !== '');
  let logs = parts.join(r.stdout.endsWith('\n') || r.stdout === '' ? '' : '\n');
  const sep = logs && !logs.endsWith('\n') ? '\n' : '';
  if (r.timedOut) logs += `${sep}[stopped at the time limit]`;
  else if (r.exitCode === null) logs += `${sep}[killed by ${r.signal ?? 'a signal'}: out of memory or processes]`;
  return logs;
}

/** The text the model reads back (JSON: the offline engine and upstream models read it alike). */
function resultText(r: RunResult | undefined, failure: string | undefined, files: readonly WrittenFile[]): string {
  const status = failure !== undefined ? 'failed' : r!.timedOut ? 'timed_out' : 'completed';
  return JSON.stringify({
    status,
    exit_code: r && !r.timedOut ? exitCodeOf(r) : null,
    timed_out: r?.timedOut ?? false,
    stdout: r ? head(r.stdout, STDOUT_CHARS) : '',
    stderr: failure ?? (r ? tail(r.stderr, STDERR_CHARS) : ''),
    ...(r?.outputTruncated ? { output_truncated: true } : {}),
    files: files.map((f) => ({ path: f.path, link: `sandbox:${f.path}`, bytes: f.bytes })),
  });
}

/** The code_interpreter service tool of one request. */
export function codeInterpreterTool(runtime: ContainerRunner, lease: ContainerLease, timeoutMs: number, log?: ContainerToolLog): AgentTool {
  return {
    definition: codeDefinition(timeoutMs),
    async run(argumentsJson, signal): Promise<ToolOutput> {
      const code = codeOf(argumentsJson);
      const failed = (why: string): ToolOutput => ({
        text: resultText(undefined, why, []),
        data: { containerId: lease.id, code, status: 'failed', logs: why, files: [] } satisfies CodeInterpreterData,
      });
      if (code.trim() === '') return failed('No code was given: send the program in `code`.');
      if (code.length > MAX_CODE_CHARS) return failed(`The program is longer than ${MAX_CODE_CHARS} characters and was not run.`);
      let ran;
      try {
        const row = await lease.get();
        signal.throwIfAborted();
        // The program comes on stdin (`-`), so its length never meets the argument limit.
        ran = await runtime.run(row, { argv: ['/usr/bin/python3', '-I', '-S', '-'], stdin: code, signal });
        signal.throwIfAborted();
      } catch (err) {
        if (signal.aborted) throw err;
        log?.warn({ err, container: lease.id }, 'code interpreter run failed');
        return failed(`The program could not run: ${err instanceof ApiError ? err.message : 'the container is not available'}.`);
      }
      const { result, written } = ran;
      return {
        text: resultText(result, undefined, written),
        // Stopped at the time limit or killed (out of memory): failed; any exit code: completed.
        data: { containerId: lease.id, code, status: result.exitCode === null ? 'failed' : 'completed', logs: logsOf(result), files: written } satisfies CodeInterpreterData,
      };
    },
  };
}

