// Which function tools to call, and with what arguments. A tool matches when
// words of its name (split on _ and camelCase) or significant words of its
// description appear in the last user message. Code the user fenced, a command, a file
// edit or screen actions the message asks for, and the service's code_interpreter and
// file_search tools, are called with arguments taken from the message.
import type { FunctionTool, ToolChoice } from '../../types.ts';
import { findArithmetic } from './arithmetic.ts';
import { codeFor, codeInterpreterTool, listingProgram, pythonFromFences } from './code-interpreter.ts';
import {
  commandArguments,
  commandFrom,
  computerTool,
  editorArgumentsFrom,
  fileEditFrom,
  patchArguments,
  patchTool,
  screenActionsFrom,
  shellArguments,
  shellTool,
  textEditorTool,
  timeoutFrom,
} from './command-intent.ts';
import { isGreeting } from './answer.ts';
import { blocksIn, fencedBlocks, PYTHON_LANGS, SHELL_LANGS, type Fence } from './fences.ts';
import { fileSearchTool, searchQuery } from './file-search.ts';
import { createHints, splitName } from './hints.ts';
import { lookupQuery, openPageTool, urlIn, webSearchTool, WEB_TOOLS } from './web.ts';
import { asksForPicture, imageTool, picturePrompt } from './image-intent.ts';
import { generateJson, type GenerationLimits } from './json-from-schema.ts';
import { randomId, type Rng } from './rng.ts';

export interface PlannedCall {
  index: number;
  id: string;
  name: string;
  /** Compact JSON text of the arguments. */
  arguments: string;
  /** Generation stopped at a budget: `arguments` is a JSON prefix, and the call ends the output ("length"). */
  truncated?: boolean;
}

/** Name words that say nothing about what a tool is for. */
const GENERIC_NAME_WORDS = new Set(
  'get set fetch retrieve do run make call tool tools function func api data info information the a an of for to by and or with current my new from in on is handle process perform execute util utils helper'.split(' '),
);
const STOPWORDS = new Set(
  'about above after again against also among another any are because been before being below between both but can cannot could does doing down during each either else ever every from further given have having here into itself just like more most much must need only other over same should some such than that their them then there these they this those through under until upon used uses using very want what when where which while will with within without would your yours returns return gets given specified provided current user users value values function tool call calls data information info based specific optional required parameter parameters result results'.split(' '),
);
const MATH_TOOL = /calc|math|arithmetic|comput|evaluat|expression/i;

/** A crude stem so "files" matches "file" and "searching" matches "search". */
export function stem(word: string): string {
  const w = word.toLowerCase().replace(/['’]s$/, '');
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ies')) return w.slice(0, -3) + 'y';
  if (w.length > 4 && w.endsWith('es') && /(ch|sh|x|ss)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

function messageStems(message: string): Set<string> {
  return new Set((message.match(/[\p{L}\p{N}]+/gu) ?? []).map(stem));
}

/** How well a tool fits a message: 2 per name word, 1 per description word. */
export function scoreTool(tool: FunctionTool, message: string, said = messageStems(message), math = findArithmetic(message) !== undefined): number {
  let score = 0;
  for (const w of new Set(splitName(tool.name).filter((w) => !GENERIC_NAME_WORDS.has(w)).map(stem))) {
    if (said.has(w)) score += 2;
  }
  const descWords = (tool.description ?? '').match(/[\p{L}]+/gu) ?? [];
  for (const w of new Set(descWords.map((w) => w.toLowerCase()).filter((w) => w.length >= 4 && !STOPWORDS.has(w)).map(stem))) {
    if (said.has(w)) score += 1;
  }
  if (math && (MATH_TOOL.test(tool.name) || MATH_TOOL.test(tool.description ?? ''))) score += 3;
  return score;
}

/** Score at which `auto` decides a tool is what the user asks for. */
export const AUTO_THRESHOLD = 2;

export interface ToolPlanInput {
  tools: readonly FunctionTool[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  /** The last user message's text. */
  message: string;
  /** True when the conversation ends with tool results: `auto` then answers. */
  afterToolResult: boolean;
  /** The last user message's fenced blocks (conversation.ts); read from `message` when not given. */
  fences?: readonly Fence[];
}

export function chooseTools(input: ToolPlanInput): FunctionTool[] {
  const { tools, toolChoice, message } = input;
  if (tools.length === 0 || toolChoice === 'none') return [];
  if (typeof toolChoice === 'object') {
    const named = tools.find((t) => t.name === toolChoice.name);
    return named ? [named] : [];
  }
  if (toolChoice === 'auto' && input.afterToolResult) return [];
  // Read the message once, not once per tool.
  const said = messageStems(message);
  const math = findArithmetic(message) !== undefined;
  const ranked = tools
    .map((tool, order) => ({ tool, order, score: scoreTool(tool, message, said, math) }))
    .sort((a, b) => b.score - a.score || a.order - b.order);
  const matched = ranked.filter((r) => r.score >= AUTO_THRESHOLD);
  const picked = matched.slice(0, input.parallelToolCalls ? 2 : 1).map((r) => r.tool);
  if (picked.length === 0 && toolChoice === 'required') return [ranked[0]!.tool];
  return picked;
}

type Intent = { tool: FunctionTool; args: Record<string, unknown> };

/** The tools a call may use now: none after `none`, or for `auto` after a tool result. */
function callable(input: ToolPlanInput): readonly FunctionTool[] {
  const { toolChoice } = input;
  if (toolChoice === 'none' || (toolChoice === 'auto' && input.afterToolResult)) return [];
  return typeof toolChoice === 'object' ? input.tools.filter((t) => t.name === toolChoice.name) : input.tools;
}

const fencesOf = (input: ToolPlanInput): readonly Fence[] => input.fences ?? fencedBlocks(input.message);

/** Does a tool other than the service's own (code_interpreter, file_search) fit the message? */
function anotherToolFits(input: ToolPlanInput): boolean {
  const service = [codeInterpreterTool(input.tools), fileSearchTool(input.tools), imageTool(input.tools)];
  const others = input.tools.filter((t) => !service.includes(t) && !WEB_TOOLS.has(t.name));
  return chooseTools({ ...input, tools: others, toolChoice: 'auto', afterToolResult: false }).length > 0;
}

/**
 * Code the user fenced, run exactly as written: python blocks by code_interpreter, shell
 * blocks (each one command) by a shell tool. Both, in the order first written, when
 * parallel calls are allowed. Before every other intent, so a caller can drive the
 * sandbox deterministically.
 */
function fencedCalls(input: ToolPlanInput, allowed: readonly FunctionTool[]): Intent[] {
  const fences = fencesOf(input);
  const found: { at: number; intent: Intent }[] = [];
  const interpreter = codeInterpreterTool(allowed);
  const code = interpreter && pythonFromFences(fences);
  if (interpreter && code !== undefined) found.push({ at: fences.findIndex((f) => PYTHON_LANGS.has(f.lang)), intent: { tool: interpreter, args: { code } } });
  const shell = shellTool(allowed);
  const commands = blocksIn(fences, SHELL_LANGS);
  if (shell && commands.length > 0) {
    found.push({ at: fences.findIndex((f) => SHELL_LANGS.has(f.lang)), intent: { tool: shell, args: shellArguments(shell, commands, timeoutFrom(input.message)?.ms) } });
  }
  // Python where no interpreter is offered at all, but a shell is: python3 runs it there, as written.
  const python = !codeInterpreterTool(input.tools) && shell ? pythonFromFences(fences) : undefined;
  if (shell && python !== undefined) {
    found.push({ at: fences.findIndex((f) => PYTHON_LANGS.has(f.lang)), intent: { tool: shell, args: shellArguments(shell, [pythonHeredoc(python)], timeoutFrom(input.message)?.ms) } });
  }
  return found
    .sort((a, b) => a.at - b.at)
    .slice(0, input.parallelToolCalls ? 2 : 1)
    .map((f) => f.intent);
}

/** `python3` reading `code` from a here-document whose delimiter no line of the code is. */
function pythonHeredoc(code: string): string {
  const lines = new Set(code.split('\n'));
  let delimiter = 'PYTHON';
  for (let n = 1; lines.has(delimiter); n++) delimiter = `PYTHON${n}`;
  return `python3 - <<'${delimiter}'\n${code}\n${delimiter}`;
}

/**
 * A client-run tool the message clearly asks for (a command to run, a file to write, a
 * screen action), with arguments taken from the message rather than generated.
 */
function intentCall(input: ToolPlanInput, allowed: readonly FunctionTool[]): Intent | undefined {
  const shell = shellTool(allowed);
  if (shell) {
    const timeout = timeoutFrom(input.message);
    const command = commandFrom(timeout?.rest ?? input.message);
    if (command) return { tool: shell, args: commandArguments(shell, command, timeout?.ms) };
  }
  const patch = patchTool(allowed);
  const edit = patch && fileEditFrom(input.message);
  if (patch && edit) return { tool: patch.tool, args: patchArguments(patch, edit) };
  const editor = textEditorTool(allowed);
  const operation = editor && editorArgumentsFrom(input.message);
  if (editor && operation) return { tool: editor, args: operation };
  const computer = computerTool(allowed);
  const actions = computer && screenActionsFrom(input.message);
  if (computer && actions) return { tool: computer, args: { actions } };
  return undefined;
}

/**
 * The service's code_interpreter for arithmetic or a question about a file
 * (code-interpreter.ts), unless another tool of the caller's fits the message better
 * and the choice does not name code_interpreter.
 */
function codeCall(input: ToolPlanInput, allowed: readonly FunctionTool[]): Intent | undefined {
  const interpreter = codeInterpreterTool(allowed);
  if (!interpreter || (typeof input.toolChoice !== 'object' && anotherToolFits(input))) return undefined;
  const code = codeFor(input.message, fencesOf(input), fileSearchTool(input.tools) !== undefined);
  return code === undefined ? undefined : { tool: interpreter, args: { code } };
}

/** A call that must be made when the message asks for nothing: code_interpreter lists /mnt/data. */
function listingCall(input: ToolPlanInput, allowed: readonly FunctionTool[]): Intent | undefined {
  const interpreter = codeInterpreterTool(allowed);
  if (!interpreter) return undefined;
  const must = typeof input.toolChoice === 'object' || (input.toolChoice === 'required' && !anotherToolFits(input));
  return must ? { tool: interpreter, args: { code: listingProgram() } } : undefined;
}

/**
 * The service's file_search tool, when offered and the user asked something: searched
 * with the user's words, unless a named tool choice picks another tool or another tool
 * fits the message (a greeting is not a question).
 */
function searchCall(input: ToolPlanInput, allowed: readonly FunctionTool[]): Intent | undefined {
  const search = fileSearchTool(allowed);
  const query = searchQuery(input.message);
  if (!search || query === '' || isGreeting(query)) return undefined;
  if (typeof input.toolChoice !== 'object' && anotherToolFits(input)) return undefined;
  return { tool: search, args: { query } };
}

/**
 * The service's web tools: a page the message names is opened, a look-up ("search the
 * web for", "look up", "latest news") searched with the user's words. Never picked by
 * the words of their descriptions (see planToolCalls).
 */
function webCall(input: ToolPlanInput, allowed: readonly FunctionTool[]): Intent | undefined {
  const open = openPageTool(allowed);
  const url = open && urlIn(input.message);
  if (open && url) return { tool: open, args: { url } };
  const search = webSearchTool(allowed);
  const query = search && lookupQuery(input.message);
  return search && query ? { tool: search, args: { query } } : undefined;
}

/**
 * The image_generation tool: called with the user's words when the message asks for a
 * picture (`explicit`), else, offered by the request, for any message that is not a
 * greeting and that no other tool of the caller's fits.
 */
function imageCall(input: ToolPlanInput, allowed: readonly FunctionTool[], explicit: boolean): Intent | undefined {
  const tool = imageTool(allowed);
  if (!tool) return undefined;
  const asked = asksForPicture(input.message);
  if (explicit ? !asked : asked || input.message.trim() === '' || isGreeting(input.message.trim())) return undefined;
  if (typeof input.toolChoice !== 'object' && anotherToolFits(input)) return undefined;
  return { tool, args: { prompt: picturePrompt(input.message) } };
}

function intents(input: ToolPlanInput): Intent[] {
  const allowed = callable(input);
  if (allowed.length === 0) return [];
  const fenced = fencedCalls(input, allowed);
  if (fenced.length > 0) return fenced;
  const one =
    imageCall(input, allowed, true) ?? webCall(input, allowed) ?? intentCall(input, allowed) ?? codeCall(input, allowed) ?? searchCall(input, allowed) ?? imageCall(input, allowed, false) ?? listingCall(input, allowed);
  return one ? [one] : [];
}

export function planToolCalls(input: ToolPlanInput, rng: Rng, limits?: GenerationLimits): PlannedCall[] {
  const found = intents(input);
  if (found.length > 0) {
    return found.map((intent, index) => {
      const text = JSON.stringify(intent.args);
      const fits = limits === undefined || text.length <= limits.maxChars;
      return { index, id: randomId(rng, 'call_'), name: intent.tool.name, arguments: fits ? text : text.slice(0, limits.maxChars), ...(fits ? {} : { truncated: true }) };
    });
  }
  // code_interpreter runs only programs written above, never generated arguments; the
  // web tools are called by auto only for a URL or a look-up (webCall), not for words.
  const interpreter = codeInterpreterTool(input.tools);
  const tools = input.tools.filter((t) => t !== interpreter && !(input.toolChoice === 'auto' && WEB_TOOLS.has(t.name)));
  const arithmetic = findArithmetic(input.message);
  return chooseTools({ ...input, tools }).map((tool, index) => {
    // Fresh hints per call, so each call reads the message from the start.
    const hints = createHints(input.message, arithmetic ? { expression: arithmetic.expression } : {});
    const schema = tool.parameters ?? { type: 'object', properties: {} };
    const args = generateJson(schema, hints, limits);
    return {
      index,
      id: randomId(rng, 'call_'),
      name: tool.name,
      arguments: args.text,
      ...(args.complete ? {} : { truncated: true }),
    };
  });
}
