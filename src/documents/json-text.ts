// JSON as text a person (and an embedder) reads easily, every key and value kept:
//
//   name: Ada
//   tags:
//     - math
//   address:
//     city: London
//
// Strings lose their quotes; numbers, booleans and null are written as JSON writes them.
// The items of a top-level array, the top-level keys that hold an object or array, and
// the records of a JSONL file are separated by a blank line, so chunking splits there.
// The walk keeps its own stack (a deeply nested document cannot overflow the call
// stack) and indents at most 16 levels (so it cannot blow up the output).

export class JsonError extends Error {
  override name = 'JsonError';
}

const MAX_INDENT_LEVELS = 16;

/** The text of a .json document; throws JsonError when it does not parse. */
export function jsonText(src: string, maxChars: number): string {
  const out = new TextOut(maxChars);
  render(parse(src, ''), out);
  return out.text();
}

/** The text of a .jsonl document: one record a line, blank lines skipped. */
export function jsonLinesText(src: string, maxChars: number): string {
  const out = new TextOut(maxChars);
  let lineNo = 0;
  for (let start = 0; start < src.length; ) {
    let end = src.indexOf('\n', start);
    if (end === -1) end = src.length;
    lineNo++;
    const line = src.slice(start, end).trim();
    start = end + 1;
    if (line === '') continue;
    if (!out.empty()) out.line('');
    render(parse(line, ` on line ${lineNo}`), out);
  }
  return out.text();
}

function parse(src: string, where: string): unknown {
  try {
    return JSON.parse(src);
  } catch (err) {
    throw new JsonError(`${(err as Error).message}${where}`);
  }
}

class TextOut {
  private readonly parts: string[] = [];
  private chars = 0;
  constructor(private readonly maxChars: number) {}
  line(s: string): void {
    this.chars += s.length + 1;
    if (this.chars > this.maxChars) throw new TextLimitError(this.maxChars);
    this.parts.push(s);
  }
  empty(): boolean {
    return this.parts.length === 0;
  }
  text(): string {
    return this.parts.join('\n');
  }
}

/** The text grew past the limit given; thrown before the memory is spent. */
export class TextLimitError extends Error {
  constructor(readonly maxChars: number) {
    super(`more than ${maxChars} characters of text`);
    this.name = 'TextLimitError';
  }
}

type Container = readonly unknown[] | Readonly<Record<string, unknown>>;

interface Frame {
  readonly entries: readonly (readonly [string | null, unknown])[];
  readonly depth: number;
  /** The document's own top level (not a record of a top-level array, also at depth 0). */
  readonly root: boolean;
  next: number;
}

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

function isEmpty(v: Container): boolean {
  if (Array.isArray(v)) return v.length === 0;
  for (const _ in v) return false;
  return true;
}

function entriesOf(v: Container): (readonly [string | null, unknown])[] {
  return Array.isArray(v) ? v.map((item) => [null, item] as const) : Object.entries(v);
}

function scalar(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function render(value: unknown, out: TextOut): void {
  if (!isContainer(value)) {
    out.line(scalar(value));
    return;
  }
  const topIsArray = Array.isArray(value);
  const stack: Frame[] = [{ entries: entriesOf(value), depth: 0, root: true, next: 0 }];
  while (stack.length > 0) {
    const frame = stack.at(-1)!;
    if (frame.next >= frame.entries.length) {
      stack.pop();
      continue;
    }
    const [key, v] = frame.entries[frame.next++]!;
    const nested = isContainer(v) && !isEmpty(v);
    // Paragraph breaks between top-level records.
    if (frame.root && frame.next > 1 && (topIsArray || nested)) out.line('');
    if (frame.root && topIsArray && nested) {
      // An item of a top-level array is a record of its own: no "-" and no indent.
      stack.push({ entries: entriesOf(v), depth: 0, root: false, next: 0 });
      continue;
    }
    const indent = '  '.repeat(Math.min(frame.depth, MAX_INDENT_LEVELS));
    const label = key === null ? '-' : `${key}:`;
    if (nested) {
      out.line(`${indent}${label}`);
      stack.push({ entries: entriesOf(v), depth: frame.depth + 1, root: false, next: 0 });
    } else {
      const shown = isContainer(v) ? (Array.isArray(v) ? '[]' : '{}') : scalar(v);
      out.line(`${indent}${label} ${shown}`);
    }
  }
}
