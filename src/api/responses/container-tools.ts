// The hosted tools of POST /responses that run in a container (SPEC "Hosted tools in
// /responses"): `code_interpreter` (Python 3, standard library) and `shell` with a
// container environment (bash). Both are service tools of the agent loop, built per
// request. Which container they use is settled before the model runs: a named one must
// be the account's and running (else 404 / 400 naming the tool), an `auto` one gets its
// id now and is made at its first run, so a response that never runs code makes none.
// An auto container continues the one an earlier item of the conversation used while
// that one still runs, so a follow-up question sees the files of the first. The code
// interpreter and a container shell of one request share their auto container.
import { modelNotAllowed, unsupportedParameter } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { ContainerLease } from '../../tools/containers/container-tool.ts';
import { newContainerId } from '../containers/containers-store.ts';
import type { ContainerRuntime, PinnedSkill, SkillRef } from '../containers/container-runtime.ts';
import type { Item } from './items.ts';

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
