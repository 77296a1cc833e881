// Best-effort: a string matching a JSON Schema `pattern`. Handles literals,
// classes, \d \w \s, groups, alternation and quantifiers (taking the minimum
// count). Lookarounds and backreferences are not supported: returns undefined
// and the caller falls back to other candidates. The caller re-checks the
// result with the real RegExp.

class Unsupported extends Error {}

export function stringFromPattern(pattern: string, variant = 0): string | undefined {
  try {
    const parser = new PatternParser(pattern, variant);
    const out = parser.alternation();
    if (parser.pos < pattern.length) return undefined; // stray ')'
    return out;
  } catch {
    return undefined;
  }
}

class PatternParser {
  pos = 0;
  constructor(
    private readonly src: string,
    private readonly variant: number,
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
      out += piece.repeat(this.quantifier());
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
      const m = /^\{(\d+)(,\d*)?\}/.exec(this.src.slice(this.pos));
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
      const rest = this.src.slice(this.pos);
      if (rest.startsWith('?:')) this.pos += 2;
      else if (/^\?<[A-Za-z_]\w*>/.test(rest)) this.pos = this.src.indexOf('>', this.pos) + 1;
      else throw new Unsupported('lookaround');
    }
    const inner = this.alternation();
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
        const m = /^(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4}))/.exec(this.src.slice(this.pos));
        if (!m) throw new Unsupported('bad \\u');
        this.pos += m[0].length;
        return String.fromCodePoint(parseInt((m[1] ?? m[2]) as string, 16));
      }
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.pos));
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
