// The service's code_interpreter tool (offered by the agent loop as a function taking
// `code`, run as Python in the sandbox with /mnt/data as its working directory): which
// program the engine asks it to run. Fenced python in the message runs exactly as
// written; else arithmetic, a question about a file, or (when a call is required) a
// listing of /mnt/data, each as a program written here (data-program.ts).
import type { FunctionTool } from '../../types.ts';
import { findArithmetic } from './arithmetic.ts';
import { arithmeticProgram, dataProgram, type Aggregate, type DataRequest } from './data-program.ts';
import { blocksIn, PYTHON_LANGS, type Fence } from './fences.ts';

export const CODE_INTERPRETER_TOOL = 'code_interpreter';
/** The same function under the messages vendor's name (its code_execution server tool). */
const CODE_TOOL_NAMES: ReadonlySet<string> = new Set([CODE_INTERPRETER_TOOL, 'code_execution']);
export const isCodeToolName = (name: string): boolean => CODE_TOOL_NAMES.has(name);

/** A function named code_interpreter that takes its program as a string `code`. */
export function codeInterpreterTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => isCodeToolName(t.name) && (t.parameters as { properties?: { code?: { type?: unknown } } } | undefined)?.properties?.code?.type === 'string');
}

/** The message's python blocks, joined in order, or undefined when it has none. */
export function pythonFromFences(fences: readonly Fence[]): string | undefined {
  const blocks = blocksIn(fences, PYTHON_LANGS);
  return blocks.length > 0 ? blocks.join('\n') : undefined;
}

/** Extensions of the files a question may name: tables and text. */
const EXT = 'csv|tsv|txt|json|jsonl|ndjson|md|log|xml|ya?ml|ini|cfg|dat|xlsx?';
/** A quoted name may hold spaces and any punctuation but its own quote. */
const QUOTED = new RegExp(
  String.raw`\x60([^\x60\n]{1,200}?\.(?:${EXT}))\x60|"([^"\n]{1,200}?\.(?:${EXT}))"|“([^”\n]{1,200}?\.(?:${EXT}))”|'([^'\n]{1,200}?\.(?:${EXT}))'(?!\w)`,
  'i',
);
/**
 * A bare name, a relative path or an absolute one ("/mnt/data/sales.csv": the program
 * maps it back under /mnt/data), not part of a URL or a longer word.
 */
const BARE = new RegExp(String.raw`(?<![\w./:\\-])(\/?(?:[\w-]{1,100}\/){0,8}[\w][\w.-]{0,200}\.(?:${EXT}))(?![\w-])`, 'i');

/** Words that make a question one about data, even without a file's name. */
const DATA_WORDS = /\b(?:csv|tsv|spreadsheets?|datasets?|tables?|columns?|rows?)\b/i;
/** Words that may be about data, or about documents a file search would answer better. */
const FILE_WORDS = /\b(?:files?|data|uploaded|upload|attached|attachment)\b/i;
const QUESTION = /\?|^\s*(?:what|which|how|who|when|where|is|are|does|do|can|could|would|please|show|tell|give|list|summari[sz]e|describe|analy[sz]e|compute|calculate|count|find|read|open|look|load|check|inspect|explore|sum|total|average)\b/i;

const COUNT = /\bhow many (?:rows|records|entries|lines|lines)\b|\b(?:number|count) of (?:rows|records|entries|lines)\b|\brow count\b|\bcount (?:the |all )?(?:rows|records|entries|lines)\b/i;
const AGGREGATE =
  /\b(total|sum|average|avg|mean|maximum|max|highest|largest|biggest|minimum|min|lowest|smallest)\b(?:\s+(?:of|for|in))?(?:\s+(?:the|all))?((?:\s+[\p{L}\p{N}_][\p{L}\p{N}_-]{0,63}){1,3})/iu;
const AGGREGATES: Record<string, Aggregate> = {
  total: 'sum', sum: 'sum', average: 'mean', avg: 'mean', mean: 'mean',
  maximum: 'max', max: 'max', highest: 'max', largest: 'max', biggest: 'max',
  minimum: 'min', min: 'min', lowest: 'min', smallest: 'min',
};
/** Words that end a column's name in a question ("total amount in sales.csv"). */
const NOT_COLUMN = new Set(
  'in of from for per by to at on and or with within across over is are was were column columns field fields value values the a an this that these those there file files csv table data sheet row rows number count'.split(' '),
);

/** The figure a question asks for: an aggregate and the column it is over. */
export function figureFrom(message: string): DataRequest['figure'] {
  if (COUNT.test(message)) return { aggregate: 'count' };
  const m = AGGREGATE.exec(message);
  if (!m) return undefined;
  const words: string[] = [];
  for (const w of m[2]!.trim().split(/\s+/)) {
    if (NOT_COLUMN.has(w.toLowerCase())) break;
    words.push(w);
  }
  return words.length > 0 ? { aggregate: AGGREGATES[m[1]!.toLowerCase()]!, column: words.join(' ') } : undefined;
}

export interface DataQuestion extends DataRequest {
  /**
   * 'strong' when the message names a file or speaks of tables, rows or columns; 'weak'
   * when it only speaks of files or data, which a file search may answer better.
   */
  strength: 'strong' | 'weak';
}

/** A question about a file or data in /mnt/data, or undefined. */
export function dataQuestionFrom(message: string): DataQuestion | undefined {
  const quoted = QUOTED.exec(message);
  const file = quoted ? (quoted[1] ?? quoted[2] ?? quoted[3] ?? quoted[4])! : BARE.exec(message)?.[1];
  if (file === undefined && !QUESTION.test(message)) return undefined;
  const strong = file !== undefined || DATA_WORDS.test(message);
  if (!strong && !FILE_WORDS.test(message)) return undefined;
  const figure = figureFrom(message);
  return { strength: strong ? 'strong' : 'weak', ...(file !== undefined ? { file } : {}), ...(figure ? { figure } : {}) };
}

/**
 * What the engine asks code_interpreter to run for a message: its python blocks, else
 * arithmetic, else a file question (one only vaguely about files is left to a file
 * search when one is offered); undefined when the message asks for none of these.
 */
export function codeFor(message: string, fences: readonly Fence[], fileSearchOffered: boolean): string | undefined {
  const fenced = pythonFromFences(fences);
  if (fenced !== undefined) return fenced;
  const arithmetic = findArithmetic(message);
  const program = arithmetic && arithmeticProgram(arithmetic.expression);
  if (program) return program;
  const question = dataQuestionFrom(message);
  if (!question || (question.strength === 'weak' && fileSearchOffered)) return undefined;
  const { strength: _, ...request } = question;
  return dataProgram(request);
}

/** The program for a call that must be made when the message asks for nothing: a listing of /mnt/data. */
export const listingProgram = (): string => dataProgram({ list: true });
