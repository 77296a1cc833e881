// Every file kind of SPEC "Vector store" ingested through the API with the official
// openai SDK and found by a search for a word only it holds: text, Markdown, CSV, JSON,
// HTML, XML, YAML, code, PDF with a text layer (made with pdf-lib), Word .docx (made with
// docx). A broken PDF and an unsupported kind end `failed` with last_error; the server
// keeps answering.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Document, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import OpenAI, { toFile } from 'openai';
import { pdf } from '../../../test/helpers/documents.ts';
import type { TestServer } from '../../../test/helpers/test-server.ts';
import { fileSearchClient, settled, startFileSearchServer } from './ingestion.test-support.ts';

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startFileSearchServer();
  client = await fileSearchClient(server);
});
after(() => server.close());


async function docx(): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ children: [new TextRun('The quarterly memo mentions the marmalade budget.')] }),
          new Table({ rows: [new TableRow({ children: [new TableCell({ children: [new Paragraph('cell')] }), new TableCell({ children: [new Paragraph('zeppelin hangar')] })] })] }),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

test('each file kind is indexed and found by its own word; broken and unsupported files fail cleanly', async () => {
  const kinds: [string, Buffer | string, string][] = [
    ['notes.txt', 'Plain notes about the albatross colony.', 'albatross'],
    ['readme.md', '# Guide\n\nThe **bellflower** blooms in June.', 'bellflower'],
    ['prices.csv', 'item,price\ncinnamon,4.20\nsaffron,12.00', 'saffron'],
    ['config.json', JSON.stringify({ service: { name: 'dromedary', replicas: 3 } }), 'dromedary'],
    ['page.html', '<html><head><style>.x{}</style><script>var secretScriptWord = 1;</script></head><body><h1>Welcome</h1><p>The <b>escarpment</b> trail opens at dawn.</p></body></html>', 'escarpment'],
    ['feed.xml', '<?xml version="1.0"?><feed><entry><title>Fjord ferries</title><body>The fjord ferry runs hourly.</body></entry></feed>', 'fjord'],
    ['deploy.yaml', 'service:\n  name: gondola\n  replicas: 2\n', 'gondola'],
    ['tool.py', 'def harpsichord_tuner(pitch):\n    """Tune a harpsichord to the given pitch."""\n    return pitch * 2\n', 'harpsichord'],
    ['scan.pdf', await pdf(['Inspection report of the iguana enclosure.', 'All heaters work.']), 'iguana'],
    ['memo.docx', await docx(), 'marmalade'],
  ];
  const ids = new Map<string, string>();
  for (const [name, content] of kinds) ids.set(name, (await client.files.create({ file: await toFile(Buffer.from(content), name), purpose: 'assistants' })).id);
  const broken = await client.files.create({ file: await toFile(Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage without xref'), 'broken.pdf'), purpose: 'assistants' });
  const binary = await client.files.create({ file: await toFile(Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03]), 'tool.exe'), purpose: 'assistants' });
  const store = await client.vectorStores.create({ file_ids: [...ids.values(), broken.id, binary.id] });
  const s = await settled(client, store.id);
  assert.deepEqual(s.file_counts, { in_progress: 0, completed: kinds.length, failed: 2, cancelled: 0, total: kinds.length + 2 });
  for (const [name, , word] of kinds) {
    const hits = await client.vectorStores.search(store.id, { query: word, max_num_results: 3 });
    assert.equal(hits.data[0]?.file_id, ids.get(name), `${name} is found by '${word}'`);
    assert.match(hits.data[0]!.content[0]!.text.toLowerCase(), new RegExp(word));
  }
  const html = [];
  for await (const part of client.vectorStores.files.content(ids.get('page.html')!, { vector_store_id: store.id })) html.push(part.text);
  assert.doesNotMatch(html.join(''), /secretScriptWord|\.x\{\}/, 'scripts and styles are not indexed');
  const failedPdf = await client.vectorStores.files.retrieve(broken.id, { vector_store_id: store.id });
  assert.equal(failedPdf.status, 'failed');
  assert.equal(failedPdf.last_error?.code, 'invalid_file');
  assert.match(failedPdf.last_error!.message, /broken\.pdf/);
  const failedExe = await client.vectorStores.files.retrieve(binary.id, { vector_store_id: store.id });
  assert.equal(failedExe.status, 'failed');
  assert.equal(failedExe.last_error?.code, 'unsupported_file');
  assert.equal((await fetch(`${server.origin}/healthz`)).status, 200);
});
