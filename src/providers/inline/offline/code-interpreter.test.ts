// The programs the engine asks code_interpreter to run, run here for real with the
// sandbox's interpreter flags (python3 -I -S) in a temporary directory standing in for
// /mnt/data.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { codeFor, codeInterpreterTool, dataQuestionFrom, figureFrom, listingProgram } from './code-interpreter.ts';
import { arithmeticOf, arithmeticProgram, DATA_DIR, DATA_PROGRAM_MARK, dataProgram, pyString } from './data-program.ts';
import { fencedBlocks } from './fences.ts';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A fresh directory holding `files`, standing in for /mnt/data. */
function dataDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'offline-ci-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** Runs a program as the sandbox does, with /mnt/data (the one constant naming it) swapped for `dir`. */
function python(code: string, dir: string): string {
  const local = code.replace(`DATA = ${pyString(DATA_DIR)}`, `DATA = ${pyString(dir)}`);
  return execFileSync('python3', ['-I', '-S', '-'], { input: local, cwd: dir, encoding: 'utf8' });
}

const codeOf = (message: string, fileSearchOffered = false) => codeFor(message, fencedBlocks(message), fileSearchOffered);

test('code_interpreter is a function named so that takes a string `code`', () => {
  const ci = { name: 'code_interpreter', parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] } };
  assert.equal(codeInterpreterTool([{ name: 'other' }, ci]), ci);
  assert.equal(codeInterpreterTool([{ name: 'code_interpreter', parameters: { type: 'object', properties: { input: { type: 'string' } } } }]), undefined);
});

test('fenced python is the program, exactly as written, before arithmetic or a file question', () => {
  const first = 'import json\nrows = [{"a": 1}]\n\tprint( json.dumps(rows) )   ';
  const second = "x = 'it''s'  \n";
  const message = `What is 2 + 2 and the total amount in sales.csv?\n\`\`\`python\n${first}\n\`\`\`\nthen\n\`\`\`PY\n${second}\n\`\`\`\n\`\`\`js\nnot this\n\`\`\``;
  assert.equal(codeOf(message), `${first}\n${second}`);
});

test('arithmetic becomes a program printing its value; Python reads it as the engine does', () => {
  assert.equal(codeOf('What is 12 * 7?'), 'print(12 * 7)');
  assert.equal(codeOf('what is 2^10 - (3 + 4) * 2'), 'print(2 ** 10 - (3 + 4) * 2)');
  assert.equal(codeOf('compute 007 / 2'), "print(format(7 / 2, '.12g'))", 'leading zeros go: Python refuses 007');
  assert.equal(arithmeticProgram('1; import os'), undefined, 'only numbers, operators and parentheses reach a program');
  const dir = dataDir();
  const runs: [string, string][] = [['What is 12 * 7?', '84'], ['what is 2^10 - (3 + 4) * 2', '1010'], ['compute 007 / 2', '3.5'], ['what is 0.1 + 0.2', '0.3'], ['what is -2^2 + 2^-1', '-3.5']];
  for (const [message, printed] of runs) assert.equal(python(codeOf(message)!, dir), `${printed}\n`, message);
  assert.equal(arithmeticOf(codeOf('what is 2^10 - 3')!), '2 ^ 10 - 3');
  assert.equal(arithmeticOf('print(__import__("os"))'), undefined);
});

test('the figure a question asks for: an aggregate over a column, or a row count', () => {
  assert.deepEqual(figureFrom('What is the total amount in sales.csv?'), { aggregate: 'sum', column: 'amount' });
  assert.deepEqual(figureFrom('average of the unit price column'), { aggregate: 'mean', column: 'unit price' });
  assert.deepEqual(figureFrom('Which region has the highest revenue per store?'), { aggregate: 'max', column: 'revenue' });
  assert.deepEqual(figureFrom('the smallest Score'), { aggregate: 'min', column: 'Score' });
  assert.deepEqual(figureFrom('How many rows does it have? And the total amount?'), { aggregate: 'count' });
  assert.equal(figureFrom('what is the max in the file?'), undefined, 'no column named');
});

test('a question about a file or data; a vague one is left to a file search when one is offered', () => {
  assert.deepEqual(dataQuestionFrom('Summarize notes.txt'), { strength: 'strong', file: 'notes.txt' });
  assert.deepEqual(dataQuestionFrom('What are the columns of the table?'), { strength: 'strong' });
  assert.deepEqual(dataQuestionFrom('What does the uploaded file say?'), { strength: 'weak' });
  assert.equal(dataQuestionFrom('I uploaded a file yesterday.'), undefined, 'not a question');
  assert.equal(dataQuestionFrom('What is at https://example.com/report.csv?')?.file, undefined, 'a URL names no file here');
  assert.equal(dataQuestionFrom('read "my sales (2024).csv" please')?.file, 'my sales (2024).csv');
  assert.equal(codeOf('What does the uploaded file say?', true), undefined);
  assert.ok(codeOf('What does the uploaded file say?', false)?.startsWith(DATA_PROGRAM_MARK));
  assert.ok(codeOf('What is the average price in prices.csv?', true)?.startsWith(DATA_PROGRAM_MARK));
  assert.equal(codeOf('Hello there'), undefined);
});

test('the summary program, run on a named CSV: the figure asked for first, then the table, without float noise', () => {
  const dir = dataDir({
    'sales.csv': 'region,amount,price,note\nnorth,10,0.1,a\nsouth,20,0.2,"b, c"\nwest,30,1.25,\n',
    'other.csv': 'x\n1\n',
  });
  const code = codeOf('What is the total amount in sales.csv?')!;
  assert.ok(code.startsWith(DATA_PROGRAM_MARK));
  assert.equal(
    python(code, dir),
    ['total amount: 60', 'file: sales.csv', 'rows: 3', 'columns: region, amount, price, note', 'amount: sum=60 mean=20 min=10 max=30', 'price: sum=1.55 mean=0.516667 min=0.1 max=1.25', ''].join('\n'),
  );
  assert.match(python(codeOf('What is the average PRICES in sales.csv?')!, dir), /^average price: 0\.516667\n/);
  assert.match(python(codeOf('how many rows are in sales.csv?')!, dir), /^row count: 3\nfile: sales\.csv\n/);
  assert.match(python(codeOf('the highest region in sales.csv?')!, dir), /^region is not a numeric column\n/);
  assert.match(python(codeOf('What is the total amount in missing.csv?')!, dir), /^note: missing\.csv is not in .*\nfile: other\.csv\n/, 'no figure from another file');
});

test('the summary program picks a CSV when none is named, reads text files, and says when there are none', () => {
  assert.match(python(codeOf('What columns does the table have?')!, dataDir({ 'a.txt': 'x', 'b.csv': 'k,v\n1,2\n' })), /^file: b\.csv\nrows: 1\ncolumns: k, v\n/);
  const text = python(codeOf('Summarize notes.txt')!, dataDir({ 'notes.txt': 'one two\nthree\n\nfour five six\nl5\nl6\n' }));
  assert.equal(text, 'file: notes.txt\nlines: 6\nwords: 8\ncharacters: 35\nfirst 5 lines:\none two\nthree\n\nfour five six\nl5\n');
  const empty = dataDir();
  assert.equal(python(codeOf('What is in the uploaded file?')!, empty), `${empty} holds no files.\n`);
  assert.equal(python(listingProgram(), dataDir({ 'b.csv': '12345', 'a/c.txt': '' })), `files in ${dirs.at(-1)}:\na/c.txt (0 bytes)\nb.csv (5 bytes)\n`);
});

/** The program's AST with its NAME and WANT settings' strings blanked, and those strings. */
function parsed(code: string): { dump: string; strings: string[] } {
  const script = [
    'import ast, json, sys',
    'tree = ast.parse(sys.stdin.read())',
    'strings = []',
    'for node in tree.body:',
    '    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("NAME", "WANT") for t in node.targets):',
    '        for c in ast.walk(node.value):',
    '            if isinstance(c, ast.Constant) and isinstance(c.value, str):',
    '                strings.append(c.value)',
    '                c.value = "X"',
    'print(json.dumps({"dump": ast.dump(tree), "strings": strings}))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-I', '-S', '-c', script], { input: code, encoding: 'utf8' })) as { dump: string; strings: string[] };
}

test('hostile file and column names reach the program only as string literals', () => {
  const benign = parsed(dataProgram({ file: 'a.csv', figure: { aggregate: 'sum', column: 'b' } }));
  const names = [
    'x"; import os; os.system("id") #.csv',
    "a'b\\c\\\\\".csv",
    'line\nbreak\r\n"""\'\'\'.csv',
    '\\N{BULLET}\\x00\\u2028.csv',
    'nul\u0000 sep\u2028 tab\t del\u007f é 🎉 \ud800.csv',
  ];
  for (const name of names) {
    const code = dataProgram({ file: name, figure: { aggregate: 'sum', column: name } });
    assert.match(code.split('\n')[2]!, /^NAME = "[\x20-\x7e]*"$/, 'one line of ASCII');
    const hostile = parsed(code);
    assert.equal(hostile.dump, benign.dump, 'the same program, only the strings differ');
    assert.deepEqual(hostile.strings, [name, 'sum', name]);
  }
  // From a message: the quoted name comes through whole, quotes and backslashes included.
  const message = 'What is the total amount in `we"ird\\name\'s.csv`?';
  const fromMessage = parsed(codeOf(message)!);
  assert.equal(fromMessage.dump, benign.dump);
  assert.deepEqual(fromMessage.strings, ['we"ird\\name\'s.csv', 'sum', 'amount']);
  const dir = dataDir({ 'we"ird\\name\'s.csv': 'amount\n5\n7\n' });
  assert.match(python(codeOf(message)!, dir), /^total amount: 12\nfile: we"ird\\name's\.csv\n/);
});

test('a file named by its absolute path under /mnt/data is the one summarized, not another table', () => {
  assert.equal(dataQuestionFrom('sum the amount column in /mnt/data/sales.csv')?.file, '/mnt/data/sales.csv');
  assert.equal(dataQuestionFrom('Summarize /mnt/data/sub/notes.txt please')?.file, '/mnt/data/sub/notes.txt');
  assert.equal(dataQuestionFrom('What is at https://example.com/data/report.csv?')?.file, undefined, 'still no name out of a URL');
  const dir = dataDir({
    'a.csv': 'amount\n1\n',
    'sales.csv': 'amount\n99\n',
    'sub/sales.csv': 'region,amount\nnorth,10\nsouth,32\n',
  });
  // /mnt/data stands for `dir` everywhere in the program, as the mount makes it inside the sandbox.
  const mounted = (code: string) => execFileSync('python3', ['-I', '-S', '-'], { input: code.replaceAll(DATA_DIR, dir), cwd: dir, encoding: 'utf8' });
  assert.match(mounted(codeOf('sum the amount column in /mnt/data/sales.csv')!), /^total amount: 99\nfile: sales\.csv\n/);
  assert.match(mounted(codeOf('sum the amount column in /mnt/data/sub/sales.csv')!), /^total amount: 42\nfile: sub\/sales\.csv\n/);
});
