import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import { PDFDocument, rgb, StandardFonts } from 'pdf-lib';
import { DocumentError, extractText, MAX_TEXT_BYTES, type DocumentErrorCode } from './extract-text.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);

async function refused(filename: string, bytes: Uint8Array, code: DocumentErrorCode, message?: RegExp): Promise<DocumentError> {
  const err = await extractText({ bytes, filename }).then(
    (r) => assert.fail(`${filename} was read: ${JSON.stringify(r.text.slice(0, 200))}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DocumentError, `${filename}: ${String(err)}`);
  assert.equal(err.code, code, `${filename}: ${err.message}`);
  assert.ok(err.message.startsWith('The file '), err.message);
  if (message) assert.match(err.message, message);
  return err;
}

/** Pages of 12 pt lines 14 pt apart; an empty line leaves a gap (a paragraph break). */
async function pdfWithText(pages: string[][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage();
    lines.forEach((line, i) => line && page.drawText(line, { x: 50, y: 700 - 14 * i, font, size: 12 }));
  }
  return doc.save();
}

/** A ZIP of deflated entries; `declared` and `crc` override what its headers say. */
function deflatedZip(entries: { name: string; data: Uint8Array; declared?: number; crc?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, declared, crc = zlib.crc32(data) } of entries) {
    const packed = zlib.deflateRawSync(data);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(declared ?? data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(declared ?? data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + packed.length;
  }
  const size = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(size, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

const DOCUMENT_XML = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;

// --- PDF

test('a PDF with a text layer: every page; pages, and gaps between lines, as paragraph breaks', async () => {
  const bytes = await pdfWithText([
    ['Photosynthesis turns light into sugar.', 'Chlorophyll absorbs red and blue.', '', 'Leaves breathe through stomata.'],
    ['The Calvin cycle fixes carbon.'],
  ]);
  const { text, kind } = await extractText({ bytes, filename: 'Biology Notes.PDF' });
  assert.equal(kind, 'pdf');
  assert.equal(
    text,
    'Photosynthesis turns light into sugar.\nChlorophyll absorbs red and blue.\n\nLeaves breathe through stomata.\n\nThe Calvin cycle fixes carbon.',
  );
});

test('a PDF without a text layer is empty_file, saying so', async () => {
  const doc = await PDFDocument.create();
  doc.addPage().drawRectangle({ x: 50, y: 50, width: 200, height: 100, color: rgb(0.2, 0.4, 0.8) });
  const err = await refused('scan.pdf', await doc.save(), 'empty_file', /no text layer/);
  assert.match(err.message, /OCR/);
});

test('a broken PDF is invalid_file: garbage after %PDF, truncated, not a PDF at all', async () => {
  await refused('garbage.pdf', utf8('%PDF-1.7\n' + 'x'.repeat(5000)), 'invalid_file', /could not be parsed as PDF/);
  const real = await pdfWithText([['Some text here']]);
  await refused('truncated.pdf', real.slice(0, Math.floor(real.length / 2)), 'invalid_file', /could not be parsed as PDF/);
  await refused('renamed.pdf', utf8('just some text'), 'invalid_file', /does not start with %PDF-/);
});

test('a PDF over the page limit is refused, not read', async () => {
  const doc = await PDFDocument.create();
  for (let i = 0; i < 2001; i++) doc.addPage();
  await refused('long.pdf', await doc.save(), 'invalid_file', /2001 pages; PDFs of at most 2000 pages/);
});

// --- Word

test('a .docx: paragraphs and table cells', async () => {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Quarterly report', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun('Revenue grew '), new TextRun({ text: 'strongly', bold: true }), new TextRun(' in spring.')] }),
          new Table({
            rows: [
              new TableRow({ children: ['Region', 'Sales'].map((t) => new TableCell({ children: [new Paragraph(t)] })) }),
              new TableRow({ children: ['Northwest', '1200'].map((t) => new TableCell({ children: [new Paragraph(t)] })) }),
            ],
          }),
          new Paragraph('Closing remarks.'),
        ],
      },
    ],
  });
  const { text, kind } = await extractText({ bytes: await Packer.toBuffer(doc), filename: 'report.docx' });
  assert.equal(kind, 'docx');
  assert.match(text, /^Quarterly report\n\nRevenue grew strongly in spring\.\n\n/);
  for (const word of ['Region', 'Sales', 'Northwest', '1200', 'Closing remarks.']) assert.ok(text.includes(word), word);
  assert.doesNotMatch(text, /\n{3}/);
});

test('a broken .docx is invalid_file: random bytes, a ZIP that is not Word, an old .doc', async () => {
  let seed = 42;
  const random = Uint8Array.from({ length: 4096 }, () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24);
  await refused('random.docx', random, 'invalid_file', /is not a \.docx file/);
  random.set([0x50, 0x4b, 0x03, 0x04]);
  await refused('random-zip.docx', random, 'invalid_file', /could not be parsed as a Word document/);
  const notWord = deflatedZip([{ name: 'hello.txt', data: utf8('hi') }]);
  await refused('other.docx', notWord, 'invalid_file', /without word\/document\.xml/);
  const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(1024)]);
  await refused('legacy.docx', ole, 'invalid_file', /old Word \.doc/);
  const good = await Packer.toBuffer(new Document({ sections: [{ children: [new Paragraph('x')] }] }));
  await refused('cut.docx', good.subarray(0, good.length - 200), 'invalid_file', /could not be parsed as a Word document/);
});

test('a zip bomb .docx is refused from its central directory, before anything is inflated', async () => {
  const bomb = deflatedZip([
    { name: '[Content_Types].xml', data: utf8('<Types/>') },
    { name: 'word/document.xml', data: Buffer.alloc(70 * 1024 * 1024, 0x20) },
  ]);
  assert.ok(bomb.length < 200 * 1024, `${bomb.length} bytes`);
  await refused('bomb.docx', bomb, 'invalid_file', /too large to read safely: its XML parts hold 70 MB uncompressed/);
});

test('a .docx whose part inflates past the size it declares stops there; damaged or ambiguous archives are refused', async () => {
  const liar = deflatedZip([{ name: 'word/document.xml', data: Buffer.alloc(20 * 1024 * 1024, 0x20), declared: 1000 }]);
  await refused('liar.docx', liar, 'invalid_file', /inflates beyond the size it declares/);
  const xml = utf8(DOCUMENT_XML('<w:p><w:r><w:t>x</w:t></w:r></w:p>'));
  await refused('crc.docx', deflatedZip([{ name: 'word/document.xml', data: xml, crc: 1234 }]), 'invalid_file', /fails its CRC check/);
  const twice = deflatedZip([
    { name: 'word/document.xml', data: xml },
    { name: 'word/document.xml', data: xml },
  ]);
  await refused('twice.docx', twice, 'invalid_file', /holds 'word\/document\.xml' twice/);
});

test('a .docx built by hand reads like one from Word (only its XML parts are kept)', async () => {
  const body = '<w:p><w:r><w:t>Hand made</w:t></w:r></w:p><w:p><w:r><w:t>second paragraph</w:t></w:r></w:p>';
  const zip = deflatedZip([
    { name: 'word/document.xml', data: utf8(DOCUMENT_XML(body)) },
    { name: 'word/media/image1.png', data: Buffer.alloc(1000) },
  ]);
  assert.deepEqual(await extractText({ bytes: zip, filename: 'hand.docx' }), { text: 'Hand made\n\nsecond paragraph', kind: 'docx' });
});

// --- Markup and data

test('HTML: no scripts or styles, link text without the URL, headings as written, table rows', async () => {
  const html = `<!doctype html><html><head><title>Page title</title><style>.secret-style { color: red }</style>
    <script>var secretScript = "do not index";</script></head>
    <body><h1>Welcome Home</h1><p>Read the <a href="https://example.com/private">user guide</a> first &amp; enjoy.</p>
    <script type="module">console.log("inline secret")</script><noscript>Enable JavaScript</noscript>
    <table><tr><th>Name</th><th>Role</th></tr><tr><td>Ada</td><td>Engineer</td></tr></table>
    <ul><li>first item</li><li>second item</li></ul><img src="x.png" alt="picture"></body></html>`;
  const { text, kind } = await extractText({ bytes: utf8(html), filename: 'index.html' });
  assert.equal(kind, 'html');
  assert.match(text, /^Welcome Home\n\nRead the user guide first & enjoy\./);
  assert.match(text, /Name +Role\nAda +Engineer/);
  assert.match(text, /first item\n \* second item/);
  for (const absent of ['secret', 'do not index', 'console.log', 'example.com', 'color', 'picture', 'Page title']) assert.ok(!text.includes(absent), absent);
});

test('XML: text content, CDATA, entities; a broken document is invalid_file', async () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE catalog [ <!ENTITY lol "lol"> <!ELEMENT catalog ANY> ]>
<!-- a comment not to index -->
<catalog xmlns:x="urn:x">
  <book id="b1"><title>Dune</title><author>Frank Herbert</author><x:note><![CDATA[<spice> & sand]]></x:note></book>
  <book id="b2"><title>Emma &amp; co &#8212; &#x263A;</title><empty/><author>Jane &lol; Austen</author></book>
</catalog>`;
  const { text, kind } = await extractText({ bytes: utf8(xml), filename: 'catalog.xml' });
  assert.equal(kind, 'xml');
  assert.equal(text, 'Dune\nFrank Herbert\n<spice> & sand\n\nEmma & co — ☺\nJane &lol; Austen');
  await refused('broken.xml', utf8('<a><b>text</a></b>'), 'invalid_file', /could not be parsed as XML: <\/a> where <\/b> was expected \(line 1\)/);
  await refused('unclosed.xml', utf8('<a>\n<b>text</b>\n'), 'invalid_file', /<a> is not closed/);
  await refused('two-roots.xml', utf8('<a/><b/>'), 'invalid_file', /a second root element/);
});

test('CSV and TSV keep one row a line', async () => {
  const csv = 'name,city,score\r\n"Smith, Ann",Paris,10\r\nBo,"New\nYork",7\r\n';
  assert.deepEqual(await extractText({ bytes: utf8(csv), filename: 'people.csv' }), {
    text: 'name,city,score\n"Smith, Ann",Paris,10\nBo,"New\nYork",7',
    kind: 'csv',
  });
  const tsv = 'a\tb\n1\t2\n';
  assert.equal((await extractText({ bytes: utf8(tsv), filename: 'x.tsv' })).text, 'a\tb\n1\t2');
});

test('JSON and JSONL: keys and values as text, records as paragraphs; broken JSON is invalid_file', async () => {
  const json = JSON.stringify({ title: 'Guide', version: 2, draft: false, owner: null, tags: ['alpha', 'beta'], meta: { pages: 12, empty: {} } });
  assert.deepEqual(await extractText({ bytes: utf8(json), filename: 'data.json' }), {
    text: 'title: Guide\nversion: 2\ndraft: false\nowner: null\n\ntags:\n  - alpha\n  - beta\n\nmeta:\n  pages: 12\n  empty: {}',
    kind: 'json',
  });
  const list = JSON.stringify([{ q: 'What is up?', a: 'The sky' }, { q: 'Why?', a: 'Because' }, 'loose']);
  assert.equal((await extractText({ bytes: utf8(list), filename: 'faq.json' })).text, 'q: What is up?\na: The sky\n\nq: Why?\na: Because\n\n- loose');
  const jsonl = '{"id":1,"text":"first record"}\n\n{"id":2,"text":"second record"}\n';
  assert.equal((await extractText({ bytes: utf8(jsonl), filename: 'rows.jsonl' })).text, 'id: 1\ntext: first record\n\nid: 2\ntext: second record');
  await refused('bad.json', utf8('{"a": 1,}'), 'invalid_file', /could not be parsed as JSON/);
  await refused('bad.jsonl', utf8('{"a":1}\n{oops}\n'), 'invalid_file', /could not be parsed as JSON Lines: .* on line 2/);
});

test('deeply nested JSON is read without overflowing a stack', async () => {
  const depth = 100_000;
  const { text } = await extractText({ bytes: utf8('['.repeat(depth) + '"bottom"' + ']'.repeat(depth)), filename: 'deep.json' });
  assert.ok(text.endsWith('- bottom'));
  assert.ok(text.length < 50 * depth, `${text.length} characters`); // indentation is capped
});

test('YAML, Markdown and code are read as text, indentation kept', async () => {
  const yaml = 'server:\n  port: 8080   \n  hosts:\n    - alpha\n';
  assert.deepEqual(await extractText({ bytes: utf8(yaml), filename: 'config.yml' }), { text: 'server:\n  port: 8080\n  hosts:\n    - alpha', kind: 'yaml' });
  const md = '# Title\n\nSome *emphasis*.\n\n\n\n- item\n';
  assert.deepEqual(await extractText({ bytes: utf8(md), filename: 'README.md' }), { text: '# Title\n\nSome *emphasis*.\n\n- item', kind: 'markdown' });
  const py = 'def area(r):\n    """Circle area."""\n    return 3.14159 * r * r\n';
  assert.deepEqual(await extractText({ bytes: utf8(py), filename: 'geometry.py' }), { text: py.trimEnd(), kind: 'code' });
  for (const name of ['main.go', 'lib.rs', 'App.java', 'x.c', 'x.cpp', 'x.h', 'x.cs', 'x.rb', 'x.php', 'run.sh', 'q.sql', 'a.css', 'a.scss', 'a.kt', 'a.swift', 'a.ts', 'a.js', 'Dockerfile']) {
    assert.equal((await extractText({ bytes: utf8('code here'), filename: name })).kind, 'code', name);
  }
  for (const name of ['notes.txt', 'server.log', 'a.text', 'doc.rst', 'paper.tex']) {
    assert.equal((await extractText({ bytes: utf8('words'), filename: name })).kind, 'text', name);
  }
});

// --- Text checks and normalisation

test('text must be UTF-8 without NUL; a BOM is dropped; UTF-16 with a BOM is read', async () => {
  await refused('latin1.txt', Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), 'invalid_file', /not valid UTF-8 text \(byte 3\)/);
  await refused('binary.txt', utf8('abc\0def'), 'invalid_file', /NUL character/);
  await refused('bad.md', Uint8Array.from([0xed, 0xa0, 0x80]), 'invalid_file', /not valid UTF-8/); // an encoded surrogate
  await refused('bad.html', Uint8Array.from([0x3c, 0x70, 0x3e, 0xff]), 'invalid_file', /not valid UTF-8/);
  const bom = Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8('héllo')]);
  assert.equal((await extractText({ bytes: bom, filename: 'bom.txt' })).text, 'héllo');
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('wide text', 'utf16le')]);
  assert.equal((await extractText({ bytes: utf16, filename: 'notepad.txt' })).text, 'wide text');
});

test('normalised: \\n breaks, no trailing spaces, one blank line at most, no control characters', async () => {
  const raw = '\n\n  \nFirst line   \r\nsecond\tline\t\r\n\r\n\r\n\f\nPara\x1b[31m two\x07\v\n\n\n\n   \n';
  assert.equal((await extractText({ bytes: utf8(raw), filename: 'messy.txt' })).text, 'First line\nsecond\tline\n\nPara[31m two');
});

test('unknown or missing extensions are unsupported_file, listing what is read', async () => {
  const err = await refused('setup.exe', utf8('MZ'), 'unsupported_file', /\(\.exe\)/);
  assert.match(err.message, /PDF/);
  assert.match(err.message, /\.docx/);
  await refused('NOTES', utf8('x'), 'unsupported_file', /no extension/);
  await refused('deck.pptx', utf8('x'), 'unsupported_file');
  await refused('x.constructor', utf8('x'), 'unsupported_file');
  await refused('constructor', utf8('x'), 'unsupported_file');
});

test('an empty file, or one of whitespace only, is empty_file', async () => {
  await refused('empty.txt', new Uint8Array(0), 'empty_file', /is empty/);
  await refused('blank.md', utf8(' \n\n\t\n'), 'empty_file', /holds no text/);
  await refused('blank.html', utf8('<html><script>only()</script></html>'), 'empty_file', /holds no text/);
  await refused('blank.pdf', new Uint8Array(0), 'empty_file');
});

test('more text than the limit is refused', async () => {
  await refused('huge.txt', new Uint8Array(MAX_TEXT_BYTES + 1).fill(0x61), 'invalid_file', /larger than 20 MB/);
  // Under the byte limit of a JSON file, over the text limit once rendered.
  const n = 700_000;
  const rows = `[${Array.from({ length: n }, () => '"' + 'y'.repeat(28) + '"').join(',')}]`;
  await refused('big.json', utf8(rows), 'invalid_file', /more than 20 MB of text/);
});

test('the file name in a message is cleaned and cut', async () => {
  const err = await refused(`evil'\n${'n'.repeat(300)}.exe`, utf8('x'), 'unsupported_file');
  assert.ok(err.message.startsWith(`The file 'evil??${'n'.repeat(114)}…' `), err.message.slice(0, 150));
});

test('an aborted signal stops the work with its reason', async () => {
  const controller = new AbortController();
  controller.abort(new Error('client gone'));
  await assert.rejects(extractText({ bytes: utf8('x'), filename: 'a.txt', signal: controller.signal }), /client gone/);
  const pdf = await pdfWithText([['text']]);
  const late = new AbortController();
  const pending = extractText({ bytes: pdf, filename: 'a.pdf', signal: late.signal });
  late.abort(new Error('stopped'));
  await assert.rejects(pending, /stopped/);
  // The sandbox is still good for the next file.
  assert.equal((await extractText({ bytes: pdf, filename: 'a.pdf' })).text, 'text');
});

test('Buffers (views on a larger buffer) are read as their own bytes', async () => {
  const big = Buffer.from('padding<a>inside</a>padding');
  assert.equal((await extractText({ bytes: big.subarray(7, 20), filename: 'v.xml' })).text, 'inside');
});
