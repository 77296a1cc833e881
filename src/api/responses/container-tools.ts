// The hosted tools of POST /responses that run in a container (SPEC "Hosted tools in
// /responses"): `code_interpreter` (Python 3, standard library) and `shell` with a
// container environment (bash). Both are service tools of the agent loop, built per
// request. Which container they use is settled before the model runs: a named one must
// be the account's and running (else 404 / 400 naming the tool), an `auto` one gets its
// id now and is made at its first run, so a response that never runs code makes none.
// An auto container continues the one an earlier item of the conversation used while
// that one still runs, so a follow-up question sees the files of the first. The code
// interpreter and a container shell of one request share their auto container.
import { constants } from 'node:os';
import type { AgentTool, ToolOutput } from '../../agent/agent-loop.ts';
import { ApiError, modelNotAllowed, unsupportedParameter } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { FunctionTool } from '../../providers/types.ts';
import type { RunResult } from '../../sandbox/types.ts';
import type { ContainersTable } from '../../store/schema.ts';
import { newContainerId } from '../containers/containers-store.ts';
import type { ContainerRuntime, PinnedSkill, SkillRef, WrittenFile } from '../containers/container-runtime.ts';
import { argumentsObject, type Item } from './items.ts';

export const CODE_INTERPRETER_FUNCTION_NAME = 'code_interpreter';
export const SHELL_FUNCTION_NAME = 'shell';

/** What the model is given back of a program's output (the item's logs keep up to the sandbox's 64 KiB). */
const STDOUT_CHARS = 16_000;
const STDERR_CHARS = 8_000;
/** A program longer than this is refused without running (a model runaway, not code). */
const MAX_CODE_CHARS = 256 * 1024;
/** At most this many commands run per shell call (the rest are dropped). */
const MAX_COMMANDS = 20;

/** A container a request's tool runs in: its id known now, the container got at first use. */
export interface ContainerLease {
  readonly id: string;
  get(): Promise<ContainersTable>;
}

type RawTool = Record<string, any>;

/** The request's container tools, as tool-mapping found them (`at`: `tools[i]`). */
export interface ContainerToolSpecs {
  codeInterpreter?: { tool: RawTool; at: string };
  shell?: { tool: RawTool; at: string };
}

export interface ResolvedContainers {
  codeInterpreter?: ContainerLease;
  shell?: ContainerLease;
}

/** A container id as this service makes them: anything else in an item is not looked up. */
const CONTAINER_ID = /^cntr_[A-Za-z0-9]{1,64}$/;
/** How many of the conversation's containers are tried, newest first. */
const MAX_EARLIER = 5;

/** The container ids the conversation's items ran in, newest first. */
function earlierContainerIds(items: readonly Item[]): string[] {
  const ids = new Set<string>();
  for (let i = items.length - 1; i >= 0 && ids.size < MAX_EARLIER; i--) {
    const item = items[i]!;
    const env = item.environment as { type?: unknown; container_id?: unknown } | null | undefined;
    const id = item.type === 'code_interpreter_call' ? item.container_id : item.type === 'shell_call' && env?.type === 'container_reference' ? env.container_id : undefined;
    if (typeof id === 'string' && CONTAINER_ID.test(id)) ids.add(id);
  }
  return [...ids];
}

/** Container settings the sandbox cannot give are refused, as POST /containers refuses them. */
function checkLimited(c: RawTool, at: string): void {
  if (c.memory_limit != null && c.memory_limit !== '1g') throw unsupportedParameter(`${at}.memory_limit`, "Containers have 1 GB of memory: memory_limit can only be '1g'.");
  if (c.network_policy != null && c.network_policy.type !== 'disabled') throw unsupportedParameter(`${at}.network_policy`, 'Containers have no network: network_policy can only be {type: disabled}.');
}

/**
 * Settles the containers of a request's code_interpreter and container shell tools,
 * refusing what cannot run before anything does (nothing is charged then): an unknown or
 * expired container, another account's (looks unknown), a file that is missing or does
 * not fit, a missing skill or version, two skills of one name, skills without the Skills
 * switch, and a host where the sandbox cannot run (503). `conversation`: the earlier
 * items and the input, where an earlier auto container may be found.
 */
export async function resolveContainers(
  runtime: ContainerRuntime,
  key: KeyRecord,
  specs: ContainerToolSpecs,
  conversation: readonly Item[],
  responseId: string,
): Promise<ResolvedContainers> {
  if (!specs.codeInterpreter && !specs.shell) return {};
  await runtime.sandbox();
  const accountId = key.accountId;
  const files: { id: string; param: string }[] = [];
  const skills: { ref: SkillRef; param: string }[] = [];
  const named = async (id: string, param: string): Promise<ContainerLease> => {
    const row = await runtime.usable(accountId, id, param);
    return { id: row.id, get: () => runtime.usable(accountId, row.id, param) };
  };
  const addAuto = (c: RawTool, at: string): void => {
    checkLimited(c, at);
    (Array.isArray(c.file_ids) ? (c.file_ids as string[]) : []).forEach((id, j) => files.push({ id, param: `${at}.file_ids[${j}]` }));
    (Array.isArray(c.skills) ? (c.skills as RawTool[]) : []).forEach((s, j) => {
      const param = `${at}.skills[${j}]`;
      if (s.type !== 'skill_reference') throw unsupportedParameter(`${param}.type`, 'Inline skills are not offered: upload the skill with POST /v1/skills and name it with skill_reference.');
      if (!key.permissions.skills) throw modelNotAllowed("This API key does not have the 'skills' permission, which mounting skills needs.", param);
      skills.push({ ref: { skill_id: String(s.skill_id), version: s.version }, param });
    });
  };

  const out: ResolvedContainers = {};
  const ci = specs.codeInterpreter;
  if (ci) {
    const c = ci.tool.container;
    if (typeof c === 'string') out.codeInterpreter = await named(c, `${ci.at}.container`);
    else addAuto(c ?? {}, `${ci.at}.container`);
  }
  const sh = specs.shell;
  if (sh) {
    const env = sh.tool.environment ?? { type: 'container_auto' };
    if (env.type === 'container_reference') out.shell = await named(String(env.container_id), `${sh.at}.environment.container_id`);
    else addAuto(env, `${sh.at}.environment`);
  }
  if ((ci && !out.codeInterpreter) || (sh && !out.shell)) {
    await runtime.checkFiles(accountId, files);
    const pinned = await runtime.checkSkills(accountId, skills);
    const lease = await autoLease(runtime, accountId, earlierContainerIds(conversation), responseId, files, skills, pinned);
    if (ci && !out.codeInterpreter) out.codeInterpreter = lease;
    if (sh && !out.shell) out.shell = lease;
  }
  return out;
}

/**
 * The auto container: the conversation's latest one still running that mounts every
 * skill asked for (the request's files are copied in unless a file of that name is
 * there), or a new one made at first use. Every use finds it again (touched), so one
 * deleted or expired meanwhile is never brought back.
 */
async function autoLease(
  runtime: ContainerRuntime,
  accountId: string,
  earlierIds: readonly string[],
  responseId: string,
  files: { id: string; param: string }[],
  skills: { ref: SkillRef; param: string }[],
  wanted: readonly PinnedSkill[],
): Promise<ContainerLease> {
  for (const id of earlierIds) {
    const row = await runtime.containers.row(accountId, id);
    if (!row || runtime.containers.isExpired(row)) continue;
    const has = runtime.pinned(row);
    if (!wanted.every((w) => has.some((h) => h.skill_id === w.skill_id && h.version === w.version))) continue;
    let copied: Promise<void> | undefined;
    return {
      id,
      get: async () => {
        const current = await runtime.usable(accountId, id);
        await (copied ??= runtime.copyIn(current, files, true));
        return current;
      },
    };
  }
  const id = newContainerId();
  let made: Promise<unknown> | undefined;
  return {
    id,
    get: async () => {
      await (made ??= runtime.create(accountId, { id, name: `auto container of ${responseId}`, files, skills }));
      return runtime.usable(accountId, id);
    },
  };
}

// --- code_interpreter -----------------------------------------------------------------

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

const parseArgs = argumentsObject;

/** The code of a call's arguments (what the item shows). */
export function codeOf(argumentsJson: string): string {
  const code = parseArgs(argumentsJson).code;
  return typeof code === 'string' ? code : '';
}

const head = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n)}\n[... ${s.length - n} more characters]`);
const tail = (s: string, n: number) => (s.length <= n ? s : `[... ${s.length - n} characters before]\n${s.slice(-n)}`);

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

export interface ContainerToolLog {
  warn(obj: object, msg: string): void;
}

/** The code_interpreter service tool of one request. */
export function codeInterpreterTool(runtime: ContainerRuntime, lease: ContainerLease, timeoutMs: number, log?: ContainerToolLog): AgentTool {
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

// --- shell in a container ---------------------------------------------------------------

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
  const a = parseArgs(argumentsJson);
  // At most MAX_COMMANDS run, and the item lists just those, so outputs pair with commands by index.
  const commands = Array.isArray(a.commands) ? a.commands.filter((c): c is string => typeof c === 'string').slice(0, MAX_COMMANDS) : [];
  const positive = (v: unknown) => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : null);
  return { commands, timeout_ms: positive(a.timeout_ms), max_output_length: positive(a.max_output_length) };
}

/** A program's exit code; one killed by a signal exits 128 + its number, as bash reports it. */
function exitCodeOf(r: RunResult): number {
  if (r.exitCode !== null) return r.exitCode;
  const n = r.signal ? constants.signals[r.signal as keyof typeof constants.signals] : undefined;
  return 128 + (n ?? 9);
}

/** The container shell service tool of one request: each command in its own bash, in order. */
export function containerShellTool(runtime: ContainerRuntime, lease: ContainerLease, timeoutMs: number, log?: ContainerToolLog): AgentTool {
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
