// Best-effort: a string matching a JSON Schema `pattern`. Handles literals,
// classes, \d \w \s, groups, alternation and quantifiers (taking the minimum
// count). Lookarounds and backreferences are not supported: returns undefined
// and the caller falls back to other candidates. The caller re-checks the
// result (on RE2). The string is never built past `maxChars`: `a{1000000}`
// gives undefined rather than a million characters.

class Unsupported extends Error {}

/** Groups nested deeper than this are not followed (the parser recurses per group). */
const MAX_GROUP_DEPTH = 64;

export function stringFromPattern(pattern: string, variant = 0, maxChars = 4096): string | undefined {
  try {
    const parser = new PatternParser(pattern, variant, maxChars);
    const out = parser.alternation();
    if (parser.pos < pattern.length) return undefined; // stray ')'
    return out;
  } catch {
    return undefined;
  }
}

const QUANTIFIER = /\{(\d+)(,\d*)?\}/y;
const UNICODE_ESCAPE = /\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4})/y;
const HEX_ESCAPE = /[0-9a-fA-F]{2}/y;
const GROUP_NAME = /\?<[A-Za-z_]\w*>/y;

/** Matches a sticky expression at `pos` (no slicing: the pattern may be long). */
function at(re: RegExp, src: string, pos: number): RegExpExecArray | null {
  re.lastIndex = pos;
  return re.exec(src);
}

class PatternParser {
  pos = 0;
  private depth = 0;
  constructor(
    private readonly src: string,
    private readonly variant: number,
    private readonly maxChars: number,
  ) {}

  private peek(): string | undefined {
    return this.src[this.pos];
  }

  alternation(): string {
    const first = this.sequence();
    while (this.peek() === '|') {
      this.pos++;
      this.sequence(); // other branches are parsed only to skip them
    }
    return first;
  }

  private sequence(): string {
    let out = '';
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      const piece = this.atom();
      const count = this.quantifier();
      if (out.length + piece.length * count > this.maxChars) throw new Unsupported('longer than the room');
      out += piece.repeat(count);
    }
    return out;
  }

  private quantifier(): number {
    const c = this.peek();
    let count = 1;
    if (c === '*' || c === '?') {
      this.pos++;
      count = 0;
    } else if (c === '+') {
      this.pos++;
    } else if (c === '{') {
      const m = at(QUANTIFIER, this.src, this.pos);
      if (!m) return 1; // a literal "{"
      this.pos += m[0].length;
      count = Number(m[1]);
    } else {
      return 1;
    }
    if (this.peek() === '?') this.pos++; // lazy marker changes nothing here
    return count;
  }

  private atom(): string {
    const c = this.src[this.pos++] as string;
    switch (c) {
      case '^':
      case '$':
        return '';
      case '.':
        return 'a';
      case '(':
        return this.group();
      case '[':
        return this.charClass();
      case '\\':
        return this.escape(false);
      default:
        return c;
    }
  }

  private group(): string {
    if (this.peek() === '?') {
      if (this.src.startsWith('?:', this.pos)) this.pos += 2;
      else if (at(GROUP_NAME, this.src, this.pos)) this.pos = this.src.indexOf('>', this.pos) + 1;
      else throw new Unsupported('lookaround');
    }
    if (++this.depth > MAX_GROUP_DEPTH) throw new Unsupported('nested too deep');
    const inner = this.alternation();
    this.depth--;
    if (this.src[this.pos++] !== ')') throw new Unsupported('unclosed group');
    return inner;
  }

  private escape(inClass: boolean): string {
    const c = this.src[this.pos++];
    const v = this.variant;
    switch (c) {
      case 'd':
        return String(v % 10);
      case 'w':
        return String.fromCharCode(97 + (v % 26));
      case 's':
        return ' ';
      case 'D':
      case 'S':
        return 'a';
      case 'W':
        return '-';
      case 'b':
        if (inClass) return '\b';
        return '';
      case 'B':
        return '';
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'u': {
        const m = at(UNICODE_ESCAPE, this.src, this.pos);
        if (!m) throw new Unsupported('bad \\u');
        this.pos += m[0].length;
        return String.fromCodePoint(parseInt((m[1] ?? m[2]) as string, 16));
      }
      case 'x': {
        const m = at(HEX_ESCAPE, this.src, this.pos);
        if (!m) throw new Unsupported('bad \\x');
        this.pos += 2;
        return String.fromCharCode(parseInt(m[0], 16));
      }
      case 'p':
      case 'P': {
        const end = this.src.indexOf('}', this.pos);
        if (end < 0) throw new Unsupported('bad \\p');
        this.pos = end + 1;
        return c === 'p' ? 'a' : '-';
      }
      case undefined:
        throw new Unsupported('trailing \\');
      default:
        if (c >= '1' && c <= '9') throw new Unsupported('backreference');
        return c;
    }
  }

  private charClass(): string {
    const negated = this.peek() === '^';
    if (negated) this.pos++;
    const singles: string[] = [];
    const ranges: [number, number][] = [];
    let first = true;
    while (this.pos < this.src.length && (this.peek() !== ']' || first)) {
      first = false;
      const lo = this.classChar();
      if (this.peek() === '-' && this.src[this.pos + 1] !== ']' && this.src[this.pos + 1] !== undefined) {
        this.pos++;
        const hi = this.classChar();
        ranges.push([lo.codePointAt(0) ?? 0, hi.codePointAt(0) ?? 0]);
      } else {
        singles.push(lo);
      }
    }
    if (this.src[this.pos++] !== ']') throw new Unsupported('unclosed class');
    const inClass = (ch: string): boolean => {
      const cp = ch.codePointAt(0) ?? 0;
      return singles.includes(ch) || ranges.some(([a, b]) => cp >= a && cp <= b);
    };
    if (negated) {
      const pick = ['a', 'A', '0', '_', '-', 'x', 'Z', '9', '!', '~'].find((ch) => !inClass(ch));
      if (pick === undefined) throw new Unsupported('negated class');
      return pick;
    }
    // Prefer a range (varies with `variant`, for unique items), else a single.
    const range = ranges[0];
    if (range) return String.fromCodePoint(range[0] + (this.variant % (range[1] - range[0] + 1)));
    const single = singles[this.variant % Math.max(1, singles.length)];
    if (single === undefined) throw new Unsupported('empty class');
    return single;
  }

  private classChar(): string {
    const c = this.src[this.pos++] as string;
    return c === '\\' ? this.escape(true) : c;
  }
}
