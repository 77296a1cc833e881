// Reasoning text for `agent-think`: a short, deterministic note on how the
// engine will answer. Higher effort adds plan and check lines.
import { formatNumber } from './arithmetic.ts';
import type { Answer } from './answer.ts';
import { truncateWords } from './answer.ts';

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export interface ReasoningInput {
  message: string;
  /** The text answer that was prepared (absent when tools are called). */
  answer?: Answer;
  /** Names of the tools about to be called. */
  toolNames: readonly string[];
  /** True when the output must be JSON. */
  json: boolean;
}

function intentLine(input: ReasoningInput): string {
  if (input.toolNames.length > 0) {
    const names = input.toolNames.join(' and ');
    return `The tool${input.toolNames.length > 1 ? 's' : ''} ${names} fit${input.toolNames.length > 1 ? '' : 's'} the request, so I will call ${input.toolNames.length > 1 ? 'them' : 'it'} with arguments that match the schema.`;
  }
  const a = input.answer;
  switch (a?.intent) {
    case 'arithmetic': {
      const v = a.arithmetic?.value;
      return v === null || v === undefined
        ? `This is arithmetic: ${a.arithmetic?.expression}. It divides by zero, so it has no value.`
        : `This is arithmetic: ${a.arithmetic?.expression}. Evaluating it gives ${formatNumber(v)}.`;
    }
    case 'identity':
      return 'They ask what I am: the offline engine of agent-api, a deterministic test model.';
    case 'browse':
      return 'They want me to browse, but I have no network access, so I will say so instead of pretending.';
    case 'tool_result':
      return 'A tool returned a result; I will report what it returned.';
    case 'say':
      return 'They ask me to repeat some text; I will repeat it exactly.';
    case 'greeting':
      return 'This is a greeting; I will greet back.';
    case 'summary':
      return 'They want a summary; I will keep the first sentences.';
    default:
      return 'I will restate the message briefly.';
  }
}

export function composeReasoning(input: ReasoningInput, effort: ReasoningEffort): string {
  if (effort === 'none') return '';
  const lines: string[] = [];
  const snippet = truncateWords(input.message.replace(/\s+/g, ' '), 12);
  lines.push(snippet ? `The user asks: "${snippet}".` : 'There is no user text to read.');
  lines.push(intentLine(input));
  if (effort === 'minimal') return lines.join(' ');
  if (input.json) lines.push('The answer must be JSON that matches the requested format.');
  if (effort === 'low') return lines.join(' ');
  lines.push('Plan: read the message, pick the simplest honest answer, then write it.');
  lines.push('I work offline, so I will not claim facts I cannot check.');
  if (effort === 'medium') return lines.join(' ');
  lines.push('Check: the answer must respect the stop sequences and the token limit.');
  lines.push('Check: the same input and seed must give the same answer.');
  if (input.answer?.intent === 'arithmetic' && input.answer.arithmetic) {
    lines.push(`Check: I parse ${input.answer.arithmetic.expression} with the usual precedence, never with eval.`);
  }
  if (effort === 'xhigh') {
    lines.push('Double-check: nothing in the answer depends on the network or the clock.');
    lines.push('Double-check: the wording comes from the seeded generator only.');
  }
  return lines.join(' ');
}
