// `shell` with a container environment (SPEC "Hosted tools in /responses"): bash
// commands run one after another in the request's container, each in its own bash,
// shown as `shell_call` + `shell_call_output` items.
import { ApiError } from '../../errors.ts';
import type { FunctionTool } from '../../providers/types.ts';
import { argumentsObject, type AgentTool, type ToolOutput } from '../types.ts';
import { exitCodeOf, head, SHELL_FUNCTION_NAME, STDERR_CHARS, STDOUT_CHARS, tail, type ContainerLease, type ContainerRunner, type ContainerToolLog, type WrittenFile } from './container-tool.ts';

/** At most this many commands run per shell call (the rest are dropped). */
const MAX_COMMANDS = 20;

/** One command's result, as `shell_call_output.output` shows it. */
export interface ShellCommandOutput {
  stdout: string;
  stderr: string;
  outcome: { type: 'exit'; exit_code: number } | { type: 'timeout' };
}

export interface ShellCallData {
  containerId: string;
  action: { commands: string[]; timeout_ms: number | null; max_output_length: number | null };
  output: ShellCommandOutput[];
  files: WrittenFile[];
}

export const SHELL_DEFINITION: FunctionTool = {
  name: SHELL_FUNCTION_NAME,
  description:
    'Runs bash commands, one after another, in a sandboxed Linux container with no network access (working directory /mnt/data, which holds the user\'s files) and returns each command\'s output and exit code.',
  parameters: {
    type: 'object',
    properties: {
      commands: { type: 'array', items: { type: 'string' }, description: 'commands to run, in order' },
      timeout_ms: { type: 'integer', description: 'time limit for each command, in milliseconds' },
      max_output_length: { type: 'integer', description: 'keep at most this many characters of each output' },
    },
    required: ['commands'],
  },
};

/** The action of a shell call's arguments: commands (strings), timeout and output length when whole positive numbers. */
export function shellAction(argumentsJson: string): ShellCallData['action'] {
  const a = argumentsObject(argumentsJson);
  // At most MAX_COMMANDS run, and the item lists just those, so outputs pair with commands by index.
  const commands = Array.isArray(a.commands) ? a.commands.filter((c): c is string => typeof c === 'string').slice(0, MAX_COMMANDS) : [];
  const positive = (v: unknown) => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : null);
  return { commands, timeout_ms: positive(a.timeout_ms), max_output_length: positive(a.max_output_length) };
}

/** The container shell service tool of one request: each command in its own bash, in order. */
export function containerShellTool(runtime: ContainerRunner, lease: ContainerLease, timeoutMs: number, log?: ContainerToolLog): AgentTool {
  return {
    definition: SHELL_DEFINITION,
    async run(argumentsJson, signal): Promise<ToolOutput> {
      const action = shellAction(argumentsJson);
      const output: ShellCommandOutput[] = [];
      const files = new Map<string, WrittenFile>();
      const clip = (s: string) => (action.max_output_length !== null && s.length > action.max_output_length ? s.slice(0, action.max_output_length) : s);
      const limit = Math.min(action.timeout_ms ?? timeoutMs, timeoutMs);
      try {
        const row = await lease.get();
        for (const command of action.commands) {
          // A caller gone (cancelled, disconnected) runs no further command.
          signal.throwIfAborted();
          const { result, written } = await runtime.run(row, { argv: ['/usr/bin/bash', '--noprofile', '--norc', '-c', command], timeoutMs: limit, signal });
          signal.throwIfAborted();
          for (const f of written) files.set(f.path, f);
          output.push({
            stdout: clip(result.stdout),
            stderr: clip(result.stderr),
            outcome: result.timedOut ? { type: 'timeout' } : { type: 'exit', exit_code: exitCodeOf(result) },
          });
        }
      } catch (err) {
        if (signal.aborted) throw err;
        log?.warn({ err, container: lease.id }, 'container shell run failed');
        output.push({ stdout: '', stderr: `The command could not run: ${err instanceof ApiError ? err.message : 'the container is not available'}.`, outcome: { type: 'exit', exit_code: 1 } });
      }
      const shown = output.map((o) => ({ ...o, stdout: head(o.stdout, STDOUT_CHARS), stderr: tail(o.stderr, STDERR_CHARS) }));
      return { text: JSON.stringify(shown), data: { containerId: lease.id, action, output, files: [...files.values()] } satisfies ShellCallData };
    },
  };
}
