// The text content of an XML document, by a small scanner (no regular expressions, one
// pass, no recursion): each element's text on a line of its own, a blank line after
// each child of the root (the records of most data files), CDATA kept as it is, the
// five predefined entities and character references decoded. Comments, processing
// instructions, the DOCTYPE and attributes are left out. Entities a DTD declares are
// never expanded (so no "billion laughs"): they stay as written. The nesting of elements
// is checked, so a broken file is refused rather than read half.

export class XmlError extends Error {
  override name = 'XmlError';
}

export function xmlText(src: string): string {
  const out: string[] = [];
  const open: string[] = [];
  let rootSeen = false;
  let i = 0;
  const n = src.length;
  const lineAt = (at: number): number => {
    let line = 1;
    for (let k = src.indexOf('\n'); k !== -1 && k < at; k = src.indexOf('\n', k + 1)) line++;
    return line;
  };
  const fail = (at: number, what: string): never => {
    throw new XmlError(`${what} (line ${lineAt(at)})`);
  };
  const text = (raw: string, at: number, decode: boolean): void => {
    const t = (decode ? decodeEntities(raw) : raw).trim();
    if (t === '') return;
    if (open.length === 0) fail(at, 'text outside the root element');
    out.push(t, '\n');
  };

  while (i < n) {
    const lt = src.indexOf('<', i);
    if (lt === -1) {
      text(src.slice(i), i, true);
      break;
    }
    if (lt > i) text(src.slice(i, lt), i, true);
    if (src.startsWith('<!--', lt)) {
      const end = src.indexOf('-->', lt + 4);
      if (end === -1) fail(lt, 'a comment is not closed');
      i = end + 3;
    } else if (src.startsWith('<![CDATA[', lt)) {
      const end = src.indexOf(']]>', lt + 9);
      if (end === -1) fail(lt, 'a CDATA section is not closed');
      text(src.slice(lt + 9, end), lt, false);
      i = end + 3;
    } else if (src.startsWith('<?', lt)) {
      const end = src.indexOf('?>', lt + 2);
      if (end === -1) fail(lt, 'a processing instruction is not closed');
      i = end + 2;
    } else if (src.startsWith('<!', lt)) {
      i = skipDeclaration(src, lt, fail);
    } else {
      const end = tagEnd(src, lt);
      if (end === -1) fail(lt, 'a tag is not closed');
      const closing = src[lt + 1] === '/';
      const selfClosing = !closing && src[end - 1] === '/';
      const name = tagName(src, lt + (closing ? 2 : 1), end);
      if (name === '') fail(lt, "a '<' that starts no tag (write &lt; in text)");
      if (closing) {
        const expected = open.pop();
        if (expected !== name) fail(lt, expected === undefined ? `</${name}> closes nothing` : `</${name}> where </${expected}> was expected`);
        if (open.length === 1) out.push('\n'); // a child of the root ends: a paragraph break
      } else {
        if (open.length === 0 && rootSeen) fail(lt, 'a second root element');
        rootSeen = true;
        if (!selfClosing) open.push(name);
      }
      i = end + 1;
    }
  }
  if (open.length > 0) fail(n, `<${open.at(-1)}> is not closed`);
  if (!rootSeen) fail(0, 'no root element');
  return out.join('');
}

/** The index of the `>` ending the tag at `lt`, quotes in attribute values respected; -1 if none. */
function tagEnd(src: string, lt: number): number {
  let quote = '';
  for (let k = lt + 1; k < src.length; k++) {
    const c = src[k]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return k;
    } else if (c === '<') {
      return -1;
    }
  }
  return -1;
}

function tagName(src: string, from: number, end: number): string {
  let k = from;
  while (k < end) {
    const c = src[k]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '/' || c === '>') break;
    k++;
  }
  return src.slice(from, k);
}

/** Past a `<!DOCTYPE ...>` (with its internal subset) or another `<!...>` declaration. */
function skipDeclaration(src: string, lt: number, fail: (at: number, what: string) => never): number {
  let depth = 0;
  let quote = '';
  for (let k = lt + 2; k < src.length; k++) {
    const c = src[k]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '[') {
      depth++;
    } else if (c === ']') {
      depth--;
    } else if (c === '<' && src.startsWith('<!--', k)) {
      const end = src.indexOf('-->', k + 4);
      if (end === -1) break;
      k = end + 2;
    } else if (c === '>' && depth <= 0) {
      return k + 1;
    }
  }
  return fail(lt, 'a declaration is not closed');
}

const NAMED: ReadonlyMap<string, string> = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
]);

/** The predefined entities and character references decoded; anything else left as written. */
export function decodeEntities(s: string): string {
  let amp = s.indexOf('&');
  if (amp === -1) return s;
  let out = '';
  let from = 0;
  while (amp !== -1) {
    const semi = s.indexOf(';', amp + 1);
    let replacement: string | undefined;
    if (semi !== -1 && semi - amp <= 12) {
      const ref = s.slice(amp + 1, semi);
      if (ref.startsWith('#')) {
        const hex = ref[1] === 'x' || ref[1] === 'X';
        const digits = ref.slice(hex ? 2 : 1);
        const code = digits !== '' && isDigits(digits, hex) ? Number.parseInt(digits, hex ? 16 : 10) : NaN;
        if (code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)) replacement = String.fromCodePoint(code);
      } else {
        replacement = NAMED.get(ref);
      }
    }
    if (replacement !== undefined) {
      out += s.slice(from, amp) + replacement;
      from = semi + 1;
    }
    amp = s.indexOf('&', replacement !== undefined ? from : amp + 1);
  }
  return out + s.slice(from);
}

function isDigits(s: string, hex: boolean): boolean {
  for (const c of s) {
    const ok = (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
    if (!ok) return false;
  }
  return true;
}
