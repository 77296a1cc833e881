// Arithmetic found in a message, evaluated by a small recursive-descent
// parser (+ - * / ^ and parentheses). Never eval: user text is untrusted.

export interface Arithmetic {
  /** The expression as normalized, e.g. "12 * 7". */
  expression: string;
  /** The value, or null for division by zero. */
  value: number | null;
}

type Tok = { kind: 'num'; value: number } | { kind: 'op'; op: string };

function lex(src: string): Tok[] | undefined {
  const toks: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === ' ') {
      i++;
    } else if ((c >= '0' && c <= '9') || c === '.') {
      const m = /^\d*\.?\d+|^\d+\.?/.exec(src.slice(i));
      if (!m) return undefined;
      toks.push({ kind: 'num', value: Number(m[0]) });
      i += m[0].length;
    } else if ('+-*/^()'.includes(c)) {
      toks.push({ kind: 'op', op: c });
      i++;
    } else {
      return undefined;
    }
  }
  return toks;
}

class DivisionByZero extends Error {}

/** Evaluates a normalized expression; undefined when it is not one. */
export function evaluate(src: string): number | null | undefined {
  const toks = lex(src);
  if (!toks || toks.length === 0) return undefined;
  let pos = 0;
  const peek = (): Tok | undefined => toks[pos];
  const isOp = (op: string): boolean => {
    const t = peek();
    return t !== undefined && t.kind === 'op' && t.op === op;
  };

  // expr := term (('+'|'-') term)*
  const expr = (): number => {
    let v = term();
    while (isOp('+') || isOp('-')) {
      const op = (toks[pos++] as { op: string }).op;
      const r = term();
      v = op === '+' ? v + r : v - r;
    }
    return v;
  };
  // term := unary (('*'|'/') unary)*
  const term = (): number => {
    let v = unary();
    while (isOp('*') || isOp('/')) {
      const op = (toks[pos++] as { op: string }).op;
      const r = unary();
      if (op === '/' && r === 0) throw new DivisionByZero();
      v = op === '*' ? v * r : v / r;
    }
    return v;
  };
  // unary := ('-'|'+') unary | power
  const unary = (): number => {
    if (isOp('-')) {
      pos++;
      return -unary();
    }
    if (isOp('+')) {
      pos++;
      return unary();
    }
    return power();
  };
  // power := atom ('^' unary)?   (right-associative)
  const power = (): number => {
    const base = atom();
    if (isOp('^')) {
      pos++;
      return base ** unary();
    }
    return base;
  };
  const atom = (): number => {
    const t = toks[pos++];
    if (!t) throw new SyntaxError('unexpected end');
    if (t.kind === 'num') return t.value;
    if (t.op === '(') {
      const v = expr();
      if (!isOp(')')) throw new SyntaxError('missing )');
      pos++;
      return v;
    }
    throw new SyntaxError('unexpected ' + t.op);
  };

  try {
    const v = expr();
    if (pos !== toks.length || !Number.isFinite(v)) return undefined;
    return v;
  } catch (err) {
    if (err instanceof DivisionByZero) return null;
    return undefined;
  }
}

const WORD_OPS: [RegExp, string][] = [
  [/\bmultiplied by\b|\btimes\b|×/gi, ' * '],
  [/\bdivided by\b|\bover\b|÷/gi, ' / '],
  [/\bplus\b|\badded to\b/gi, ' + '],
  [/\bminus\b/gi, ' - '],
  [/\bto the power of\b|\*\*/gi, ' ^ '],
  [/(\d)\s*[xX]\s*(?=\d)/g, '$1 * '],
];

/** A math cue makes short expressions count, e.g. "what is 2+2". */
const CUE = /\b(what(?:'s| is)|calculate|compute|evaluate|solve|how much is)\b|=/i;

/** Finds the arithmetic a message asks for, if any. */
export function findArithmetic(message: string): Arithmetic | undefined {
  let text = message;
  for (const [re, sym] of WORD_OPS) text = text.replace(re, sym);
  let best: Arithmetic | undefined;
  for (const m of text.matchAll(/[\d.()+\-*/^\s]+/g)) {
    const expression = m[0].replace(/\s+/g, ' ').trim().replace(/[.\s]+$/, '');
    // An expression needs an operator between two operands, not just "-3" or "2024".
    if (!/\d[\s)]*[-+*/^][\s(+-]*[\d.(]/.test(expression)) continue;
    const value = evaluate(expression);
    if (value === undefined) continue;
    if (!best || expression.length > best.expression.length) best = { expression: spaced(expression), value };
  }
  if (!best) return undefined;
  const compact = best.expression.replace(/\s/g, '');
  const meaningful = message.replace(/[^\p{L}\p{N}+\-*/^()×÷]/gu, '');
  return CUE.test(message) || compact.length * 2 >= meaningful.length ? best : undefined;
}

function spaced(expression: string): string {
  return expression
    .replace(/\s/g, '')
    .replace(/(?<=[\d)])([-+*/^])/g, ' $1 ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number.parseFloat(value.toPrecision(12)));
}
