// The Python programs the engine writes for the code_interpreter tool when the user
// did not give code: one that summarizes a file in /mnt/data (or lists the files there),
// and one that prints the value of an arithmetic expression. Python 3, stdlib only
// (the sandbox runs `python3 -I -S`). User text reaches a program only as a string
// literal made by pyString, never as code.

/** Where the sandbox keeps the container's files; the programs' working directory. */
export const DATA_DIR = '/mnt/data';
/** The first line of the summary program, which the answer recognizes it by. */
export const DATA_PROGRAM_MARK = '# agent-api offline engine: summarizes the files in /mnt/data.';

export type Aggregate = 'sum' | 'mean' | 'max' | 'min' | 'count';

export interface DataRequest {
  /** The file the user named, as written; else the program picks one. */
  file?: string;
  /** A figure the user asked for, printed first; `column` as the user wrote it. */
  figure?: { aggregate: Aggregate; column?: string };
  /** List the files (name and size) instead of summarizing one. */
  list?: boolean;
}

/** What the figure line starts with, per aggregate ("total amount: 60"). */
export const FIGURE_LABELS: Record<Aggregate, string> = { sum: 'total', mean: 'average', max: 'highest', min: 'lowest', count: 'row count' };

/**
 * A Python string literal holding exactly `s`, in ASCII: printable ASCII other than
 * the quote and backslash as is, everything else escaped by code point. Nothing in `s`
 * can end the literal or start a line.
 */
export function pyString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else if (c <= 0xff) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (c <= 0xffff) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += '\\U' + c.toString(16).padStart(8, '0');
  }
  return out + '"';
}

const pyOptional = (s: string | undefined): string => (s === undefined ? 'None' : pyString(s));

/** The program that summarizes a file, or lists them: settings, then a fixed body. */
export function dataProgram(request: DataRequest): string {
  const figure = request.figure;
  const settings = [
    DATA_PROGRAM_MARK,
    `DATA = ${pyString(DATA_DIR)}`,
    `NAME = ${pyOptional(request.file)}`,
    `WANT = ${figure ? `(${pyString(figure.aggregate)}, ${pyOptional(figure.column)})` : 'None'}`,
    `LIST = ${request.list ? 'True' : 'False'}`,
  ];
  return settings.join('\n') + '\n' + DATA_BODY;
}

// Figures are Decimals, so sums carry no float noise; shown as ints when whole, else
// with at most 6 decimals. Names are printed on one line (a CSV header may hold a
// line break). Every loop is bounded by the files' size or MAX_FILES.
const DATA_BODY = String.raw`import csv, os, re
from decimal import Decimal, InvalidOperation, ROUND_HALF_UP, getcontext

getcontext().prec = 50
MAX_FILES = 1000
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?")
LABELS = {"sum": "total", "mean": "average", "max": "highest", "min": "lowest"}


def one_line(text, limit=200):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def fmt(value):
    if value == 0:
        return "0"
    if value == value.to_integral_value():
        return str(int(value))
    try:
        if value.as_tuple().exponent < -6:
            value = value.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
        return format(value.normalize(), "f")
    except InvalidOperation:
        return format(value, ".15g")


def all_files():
    found = []
    for root, dirs, names in os.walk(DATA):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append(os.path.relpath(path, DATA))
            if len(found) >= MAX_FILES:
                return sorted(found)
    return sorted(found)


def pick(found):
    if NAME is not None:
        wanted = NAME[len(DATA) + 1:] if NAME.startswith(DATA + "/") else NAME
        if wanted in found:
            return wanted, None
        base = os.path.basename(wanted).lower()
        for name in found:
            if os.path.basename(name).lower() == base:
                return name, None
        note = "note: " + one_line(NAME) + " is not in " + DATA
    else:
        note = None
    tables = [name for name in found if name.lower().endswith((".csv", ".tsv"))]
    return (tables or found)[0], note


def norm(text):
    return "".join(ch for ch in text.lower() if ch.isalnum())


def find_column(header, wanted):
    keys = [norm(name) for name in header]
    key = norm(wanted)
    for candidate in (key, key[:-1] if key.endswith("s") else ""):
        if candidate and candidate in keys:
            return keys.index(candidate)
    if len(key) >= 3:
        for i, name in enumerate(keys):
            if key in name:
                return i
    for word in wanted.split():
        if norm(word) in keys:
            return keys.index(norm(word))
    return None


def numbers(rows, i):
    cells = [row[i].strip() for row in rows if i < len(row) and row[i].strip()]
    if not cells or not all(NUMBER.fullmatch(cell) for cell in cells):
        return None
    return [Decimal(cell) for cell in cells]


def stats(values):
    total = sum(values, Decimal(0))
    return {"sum": total, "mean": total / len(values), "min": min(values), "max": max(values)}


def figure(header, rows):
    kind, wanted = WANT
    if kind == "count":
        return "row count: " + str(len(rows))
    if wanted is None:
        return None
    i = find_column(header, wanted)
    if i is None:
        return 'no column matches "' + one_line(wanted) + '"'
    values = numbers(rows, i)
    name = one_line(header[i])
    if values is None:
        return name + " is not a numeric column"
    return LABELS[kind] + " " + name + ": " + fmt(stats(values)[kind])


def summarize_table(path, name, want):
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        delimiter = "\t" if name.lower().endswith(".tsv") else ","
        rows = [row for row in csv.reader(f, delimiter=delimiter) if any(cell.strip() for cell in row)]
    header = [one_line(cell) or "column " + str(i + 1) for i, cell in enumerate(rows[0] if rows else [])]
    rows = rows[1:]
    if want:
        line = figure(header, rows)
        if line is not None:
            print(line)
    print("file: " + one_line(name))
    print("rows: " + str(len(rows)))
    print("columns: " + ", ".join(header))
    for i, column in enumerate(header):
        values = numbers(rows, i)
        if values is not None:
            s = stats(values)
            print(column + ": " + " ".join(k + "=" + fmt(s[k]) for k in ("sum", "mean", "min", "max")))


def summarize_text(path, name, want):
    with open(path, "rb") as f:
        data = f.read()
    if want and WANT[0] == "count":
        print("row count: " + str(len(data.splitlines())))
    print("file: " + one_line(name))
    if b"\0" in data[:8192]:
        print("binary file: " + str(len(data)) + " bytes")
        return
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    print("lines: " + str(len(lines)))
    print("words: " + str(len(text.split())))
    print("characters: " + str(len(text)))
    print("first 5 lines:")
    for line in lines[:5]:
        print(line if len(line) <= 500 else line[:500] + "...")


found = all_files()
if not found:
    print(DATA + " holds no files.")
elif LIST:
    print("files in " + DATA + ":")
    for name in found:
        print(one_line(name) + " (" + str(os.path.getsize(os.path.join(DATA, name))) + " bytes)")
else:
    name, note = pick(found)
    path = os.path.join(DATA, name)
    # A figure from another file than the one named would mislead: the note comes first instead.
    if note:
        print(note)
    try:
        if name.lower().endswith((".csv", ".tsv")):
            summarize_table(path, name, WANT is not None and not note)
        else:
            summarize_text(path, name, WANT is not None and not note)
    except csv.Error as err:
        print("file: " + one_line(name))
        print("could not read it as CSV: " + one_line(err))
`;

/**
 * A program printing the value of a normalized arithmetic expression (arithmetic.ts),
 * or undefined when `expression` holds anything but numbers, + - * / ^ and parentheses.
 * Numbers lose leading zeros (Python refuses `007`); `^` becomes `**`. A result with a
 * fraction prints with 12 significant digits, as the engine's own arithmetic does.
 */
export function arithmeticProgram(expression: string): string | undefined {
  if (!/^[\d.+\-*/^() ]{1,500}$/.test(expression)) return undefined;
  const python = expression.replace(/\d*\.?\d+|\d+\.?/g, (n) => n.replace(/^0+(?=\d)/, '')).replace(/\^/g, '**');
  return /[./]/.test(python) ? `print(format(${python}, '.12g'))` : `print(${python})`;
}

/** The expression an arithmeticProgram prints, or undefined when `code` is not one. */
export function arithmeticOf(code: string): string | undefined {
  const m = /^print\((?:format\(([\d.+\-*/() ]{1,1000}), '\.12g'\)|([\d+\-*/() ]{1,1000}))\)$/.exec(code.slice(0, 1100));
  const expression = m ? (m[1] ?? m[2])!.replace(/\*\*/g, '^') : undefined;
  // As findArithmetic: an operator between two operands (`print(1)` is not arithmetic).
  return expression !== undefined && /\d[\s)]*[-+*/^][\s(+-]*[\d.(]/.test(expression) ? expression : undefined;
}
