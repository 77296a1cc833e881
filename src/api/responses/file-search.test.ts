// The file_search hosted tool end to end with the openai SDK, over an in-test vector
// search (the real one is wired in app.ts): the file_search_call item and its events
// against the reference's schemas and order, results only with include (live, stored,
// replayed, listed), file_citation annotations at the answer's [n] markers, the key's
// File search switch, the tool's member rules, and the account the search is asked for.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import type { SearchOptions, SearchResult, StoreState, VectorSearch } from '../../retrieval/search-types.ts';
import { checkStream, parseSse, validateResponseObject } from './event-checks.test-support.ts';
import { fileSearchTool, queriesOf } from '../../tools/file-search/file-search-tool.ts';
import { fileCitations } from './file-citations.ts';
import { mapTools } from './tool-mapping.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { noPermissions } from '../../keys/permissions.ts';

interface Passage {
  file_id: string;
  filename: string;
  text: string;
  attributes: Record<string, string | number | boolean> | null;
}

/**
 * Vector stores kept in memory per account; a passage's score is the share of the
 * query's words it contains. Like the real one, another account's store ids are not
 * the caller's (refused before the model runs). Every call is recorded.
 */
class MemorySearch implements VectorSearch {
  readonly calls: { accountId: string; vectorStoreIds: readonly string[]; options: SearchOptions }[] = [];
  private readonly stores = new Map<string, Passage[]>();

  add(accountId: string, storeId: string, passages: Passage[]): void {
    this.stores.set(`${accountId}/${storeId}`, passages);
  }

  async search(accountId: string, vectorStoreIds: readonly string[], options: SearchOptions): Promise<SearchResult[]> {
    this.calls.push({ accountId, vectorStoreIds, options });
    const words = [options.query].flat().join(' ').toLowerCase().match(/[a-z0-9]+/g) ?? [];
    const found: SearchResult[] = [];
    for (const id of vectorStoreIds) {
      for (const p of this.stores.get(`${accountId}/${id}`) ?? []) {
        const text = p.text.toLowerCase();
        const score = words.filter((w) => text.includes(w)).length / Math.max(1, words.length);
        if (score > 0 && score >= (options.scoreThreshold ?? 0)) found.push({ file_id: p.file_id, filename: p.filename, score, attributes: p.attributes, content: [{ type: 'text', text: p.text }] });
      }
    }
    return found.sort((a, b) => b.score - a.score).slice(0, options.maxResults ?? 10);
  }

  async storeStates(accountId: string, vectorStoreIds: readonly string[]): Promise<Map<string, StoreState>> {
    return new Map(vectorStoreIds.filter((id) => this.stores.has(`${accountId}/${id}`)).map((id) => [id, 'active' as const]));
  }
}

const POLICY: Passage = {
  file_id: 'file-policy',
  filename: 'policy.md',
  text: 'The refund policy: refunds are accepted within 30 days of purchase. Items must be unused. Write to support to start one.',
  attributes: { team: 'sales' },
};
const SHIPPING: Passage = { file_id: 'file-ship', filename: 'shipping.txt', text: 'Shipping takes 5 days; a refund of shipping is never given.', attributes: null };
const CAFE: Passage = { file_id: 'file-cafe', filename: 'café 📚 notes.md', text: 'What is the policy on refund of coffee? The café gives one refund a day.', attributes: null };

const QUESTION = 'What is the refund policy?';

async function collect(stream: AsyncIterable<any>): Promise<any[]> {
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

/** Each annotation's file and where its marker is: `[n]` at its index (code points). */
function citedAt(text: string, annotations: any[]): { file_id: string; marker: string }[] {
  const points = [...text];
  return annotations.map((a) => ({ file_id: a.file_id, marker: points.slice(a.index, a.index + 3).join('') }));
}

describe('file_search in /v1/responses', () => {
  const search = new MemorySearch();
  let server: TestServer;
  let client: OpenAI;
  let accountId: string;
  const tool = { type: 'file_search' as const, vector_store_ids: ['vs_docs'] };

  before(async () => {
    server = await startTestServer({}, { vectorSearch: search });
    accountId = (await server.createAccount()).id;
    const { key } = await server.createKey({ account_id: accountId, permissions: { file_search: true, function_calling: true } });
    client = server.openai(key);
    search.add(accountId, 'vs_docs', [POLICY, SHIPPING]);
    search.add(accountId, 'vs_cafe', [CAFE]);
  });
  after(() => server.close());

  test('non-streamed: a file_search_call, then an answer quoting the passages with file_citation annotations at its markers', async () => {
    const r = await client.responses.create({
      model: 'agent',
      input: QUESTION,
      tools: [{ ...tool, max_num_results: 5, filters: { type: 'eq', key: 'team', value: 'sales' }, ranking_options: { score_threshold: 0.2, ranker: 'auto' } }],
    });
    validateResponseObject(r);
    assert.deepEqual(r.output.map((i) => i.type), ['file_search_call', 'message']);
    const call = r.output[0] as any;
    assert.match(call.id, /^fs_/);
    assert.equal(call.status, 'completed');
    assert.deepEqual(call.queries, [QUESTION]);
    assert.equal(call.results, null, 'results only with include');

    const seen = search.calls.at(-1)!;
    assert.equal(seen.accountId, accountId);
    assert.deepEqual(seen.vectorStoreIds, ['vs_docs']);
    assert.deepEqual(seen.options, { query: QUESTION, maxResults: 5, filters: { type: 'eq', key: 'team', value: 'sales' }, scoreThreshold: 0.2 });

    const text = r.output_text;
    assert.match(text, /^From policy\.md: "The refund policy: refunds are accepted within 30 days of purchase\. Items must be unused\." \[1\]$/m);
    assert.match(text, /^From shipping\.txt: ".*" \[2\]$/m);
    const part = (r.output[1] as any).content[0];
    assert.deepEqual(part.annotations.map((a: any) => [a.type, a.file_id, a.filename]), [
      ['file_citation', 'file-policy', 'policy.md'],
      ['file_citation', 'file-ship', 'shipping.txt'],
    ]);
    assert.deepEqual(citedAt(text, part.annotations), [
      { file_id: 'file-policy', marker: '[1]' },
      { file_id: 'file-ship', marker: '[2]' },
    ]);
  });

  test('include file_search_call.results: each passage with file_id, filename, score, attributes and text; stored, and shown again only with include', async () => {
    const r = await client.responses.create({ model: 'agent', input: QUESTION, tools: [tool], include: ['file_search_call.results'] });
    const call = r.output[0] as any;
    assert.deepEqual(call.results, [
      { file_id: 'file-policy', filename: 'policy.md', score: 0.6, attributes: { team: 'sales' }, text: POLICY.text },
      { file_id: 'file-ship', filename: 'shipping.txt', score: 0.4, attributes: null, text: SHIPPING.text },
    ]);
    const plain = (await client.responses.retrieve(r.id)) as any;
    assert.equal(plain.output[0].results, null);
    const withResults = (await client.responses.retrieve(r.id, { include: ['file_search_call.results'] })) as any;
    assert.deepEqual(withResults.output[0], call);
    assert.deepEqual(withResults.output[1], r.output[1], 'the stored answer has its annotations');

    // Made without include, the results were kept all the same.
    const earlier = await client.responses.create({ model: 'agent', input: QUESTION, tools: [tool] });
    const later = (await client.responses.retrieve(earlier.id, { include: ['file_search_call.results'] })) as any;
    assert.equal(later.output[0].results.length, 2);
  });

  test('streamed: added, in_progress, searching, completed, done, then the answer with its annotation events before output_text.done; against the reference schemas; the same as stored and replayed', async () => {
    const events = await collect(await client.responses.create({ model: 'agent', input: QUESTION, tools: [tool], stream: true }));
    const final = checkStream(events);
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(2, 7), [
      'response.output_item.added',
      'response.file_search_call.in_progress',
      'response.file_search_call.searching',
      'response.file_search_call.completed',
      'response.output_item.done',
    ]);
    const call = final.output[0];
    for (const e of events.slice(3, 6)) assert.deepEqual([e.item_id, e.output_index], [call.id, 0]);
    assert.deepEqual(events[2].item, { ...call, status: 'in_progress', results: null });
    assert.deepEqual(events[6].item, call);
    assert.equal(call.results, null);

    const annotations = events.filter((e) => e.type === 'response.output_text.annotation.added');
    const textDone = types.indexOf('response.output_text.done');
    assert.equal(annotations.length, 2);
    assert.ok(annotations.every((e) => types.indexOf(e.type) < textDone && e.item_id === final.output[1].id && e.output_index === 1 && e.content_index === 0));
    assert.deepEqual(annotations.map((e) => e.annotation_index), [0, 1]);
    assert.deepEqual(annotations.map((e) => e.annotation), final.output[1].content[0].annotations);
    const streamed = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(streamed, final.output[1].content[0].text, 'the markers stay in the text');

    const { output_text: _, _request_id: __, ...stored } = (await client.responses.retrieve(final.id)) as any;
    assert.deepEqual(stored, final);
    const once = await client.responses.create({ model: 'agent', input: QUESTION, tools: [tool] });
    assert.equal(once.output_text, streamed);

    const replay = parseSse(await (await server.fetch(`/v1/responses/${final.id}?stream=true`, { key: client.apiKey! })).text()).map((s) => s.data);
    checkStream(replay);
    assert.deepEqual(replay.map((e) => e.type).filter((t) => t !== 'response.output_text.delta'), types.filter((t) => t !== 'response.output_text.delta'));
    assert.deepEqual(replay.at(-1)!.response, final);
  });

  test('streamed with include: the item done event carries the results', async () => {
    const events = await collect(await client.responses.create({ model: 'agent', input: QUESTION, tools: [tool], include: ['file_search_call.results'], stream: true }));
    const final = checkStream(events);
    const done = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'file_search_call');
    assert.equal(done.item.results.length, 2);
    assert.deepEqual(final.output[0].results, done.item.results);
    const replay = parseSse(await (await server.fetch(`/v1/responses/${final.id}?stream=true&include[]=file_search_call.results`, { key: client.apiKey! })).text()).map((s) => s.data);
    assert.deepEqual(replay.find((e) => e.type === 'response.output_item.done' && e.item.type === 'file_search_call')!.item, done.item);
  });

  test('citation indexes count code points', async () => {
    const r = await client.responses.create({ model: 'agent', input: 'What is the refund policy for coffee?', tools: [{ type: 'file_search', vector_store_ids: ['vs_cafe'] }] });
    const part = (r.output[1] as any).content[0];
    assert.match(part.text, /^From café 📚 notes\.md: ".*" \[1\]$/);
    assert.deepEqual(citedAt(part.text, part.annotations), [{ file_id: 'file-cafe', marker: '[1]' }]);
    assert.equal(part.annotations[0].index, [...part.text].length - 3);
    assert.notEqual(part.annotations[0].index, part.text.length - 3, 'the emoji is one code point, two UTF-16 units');
  });

  test('nothing found: the answer says so and cites nothing', async () => {
    const other = await server.createKey({ permissions: { file_search: true } });
    search.add(other.account_id, 'vs_docs', []);
    const r = await server.openai(other.key).responses.create({ model: 'agent', input: QUESTION, tools: [tool], include: ['file_search_call.results'] });
    assert.equal(search.calls.at(-1)!.accountId, other.account_id, 'the search is asked for the caller’s account');
    const call = r.output[0] as any;
    assert.equal(call.status, 'completed');
    assert.deepEqual(call.results, []);
    assert.equal(r.output_text, `Nothing was found in the files for "${QUESTION}".`);
    assert.deepEqual((r.output[1] as any).content[0].annotations, []);
  });

  test('a greeting searches nothing; a client function the message asks for is called instead of searching', async () => {
    const hello = await client.responses.create({ model: 'agent', input: 'Hello!', tools: [tool] });
    assert.deepEqual(hello.output.map((i) => i.type), ['message']);
    const weather = { type: 'function' as const, name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };
    const r = await client.responses.create({ model: 'agent', input: 'What is the weather in Paris?', tools: [tool, weather] });
    assert.deepEqual(r.output.map((i) => i.type), ['function_call']);
    const both = await client.responses.create({ model: 'agent', input: QUESTION, tools: [weather, tool] });
    assert.deepEqual(both.output.map((i) => i.type), ['file_search_call', 'message'], 'beside client tools, the search still runs');
  });

  test('conversations and input items show the results only with include', async () => {
    const conversation = await client.conversations.create({});
    const r = await client.responses.create({ model: 'agent', input: QUESTION, tools: [tool], conversation: conversation.id, include: ['file_search_call.results'] });
    assert.equal((r.output[0] as any).results.length, 2);
    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    const listed = items.data.find((i) => i.type === 'file_search_call') as any;
    assert.equal(listed.results, null);
    const next = await client.responses.create({ model: 'agent', previous_response_id: r.id, input: [{ ...(r.output[0] as any) }, { role: 'user', content: 'thanks' }] });
    const inputs = await client.responses.inputItems.list(next.id, { order: 'asc', include: ['file_search_call.results'] });
    assert.equal((inputs.data[0] as any).results.length, 2);
    const hidden = await client.responses.inputItems.list(next.id, { order: 'asc' });
    assert.equal((hidden.data[0] as any).results, null);
  });

  test('another account’s or an unknown store id: 404 naming tools[i].vector_store_ids[j], before anything runs', async () => {
    const other = await server.createKey({ permissions: { file_search: true } });
    const calls = search.calls.length;
    await assert.rejects(
      server.openai(other.key).responses.create({ model: 'agent', input: QUESTION, tools: [tool] }),
      (e: any) => e.status === 404 && e.type === 'invalid_request_error' && e.param === 'tools[0].vector_store_ids[0]',
    );
    await assert.rejects(
      client.responses.create({ model: 'agent', input: QUESTION, tools: [{ type: 'function', name: 'f', parameters: {}, strict: false }, { ...tool, vector_store_ids: ['vs_docs', 'vs_nope'] }] }),
      (e: any) => e.status === 404 && e.param === 'tools[1].vector_store_ids[1]' && /vs_nope/.test(e.message),
    );
    assert.equal(search.calls.length, calls, 'nothing searched');
  });

  test('the key needs the File search switch: 403 naming the tool, before anything runs', async () => {
    const { key } = await server.createKey({ permissions: { function_calling: true } });
    const calls = search.calls.length;
    await assert.rejects(server.openai(key).responses.create({ model: 'agent', input: QUESTION, tools: [tool] }), (e: any) => e.status === 403 && e.code === 'model_not_allowed' && e.param === 'tools[0].type');
    assert.equal(search.calls.length, calls);
  });

  test('member rules: hybrid_search refused, max_num_results 1 to 50, vector_store_ids required, one file_search tool', async () => {
    const refused = (body: Record<string, unknown>, param: string, code: string) =>
      assert.rejects(client.responses.create({ model: 'agent', input: QUESTION, tools: [{ ...tool, ...body } as never] }), (e: any) => e.status === 400 && e.param === param && e.code === code, param);
    await refused({ ranking_options: { hybrid_search: { embedding_weight: 1, text_weight: 1 } } }, 'tools[0].ranking_options.hybrid_search', 'unsupported_parameter');
    await refused({ max_num_results: 51 }, 'tools[0].max_num_results', 'invalid_request');
    await refused({ max_num_results: 0 }, 'tools[0].max_num_results', 'invalid_request');
    await refused({ ranking_options: { score_threshold: 1.5 } }, 'tools[0].ranking_options.score_threshold', 'invalid_request');
    await refused({ vector_store_ids: [] }, 'tools[0].vector_store_ids', 'invalid_request');
    await assert.rejects(client.responses.create({ model: 'agent', input: QUESTION, tools: [{ type: 'file_search' } as never] }), (e: any) => e.status === 400 && e.param === 'tools[0].vector_store_ids');
    await assert.rejects(client.responses.create({ model: 'agent', input: QUESTION, tools: [tool, tool] }), (e: any) => e.status === 400 && e.param === 'tools[1]');
  });

  test('/capabilities publishes the tool’s members', async () => {
    const caps = (await (await server.fetch('/v1/capabilities')).json()) as any;
    assert.equal(caps.unsupported_fields['POST /responses']['tools[file_search].ranking_options.hybrid_search'], 'hybrid search weights are not offered');
    assert.ok(caps.accepted_without_effect['POST /responses'].includes('tools[file_search].ranking_options.ranker'));
    assert.ok(caps.fields['POST /responses'].includes('tools[file_search].vector_store_ids'));
  });
});

describe('the tool and its citations', () => {
  test('without a vector search the tool is refused as not offered, before the switch is looked at', () => {
    const key = { permissions: noPermissions() } as KeyRecord;
    const tools = [{ type: 'file_search', vector_store_ids: ['vs_1'] }];
    assert.throws(() => mapTools(tools, undefined, key, new Set(['file_search'])), (e: any) => e.status === 400 && e.code === 'unsupported_parameter' && e.param === 'tools[0].type');
    assert.throws(() => mapTools(tools, undefined, key), (e: any) => e.status === 403 && e.param === 'tools[0].type');
    const mapped = mapTools(tools, { type: 'file_search' }, { permissions: { ...noPermissions(), file_search: true } } as KeyRecord);
    assert.deepEqual([mapped.functions, mapped.fileSearch?.at, mapped.toolChoice], [[], 'tools[0]', { name: 'file_search' }], 'no client function; a file_search choice names it');
  });

  test('fileCitations: every number of [n], [1][2] and [1, 2] that names a passage, at its bracket, in code points', () => {
    const sources = new Map([
      [1, { file_id: 'file-1', filename: 'a.md' }],
      [2, { file_id: 'file-2', filename: 'b.md' }],
    ]);
    const text = '📚 One [1]. Both [1][2], listed [2, 1]. Unknown [7], not a marker [x] or [ 1 ].';
    const at = (marker: string, from = 0) => [...text.slice(0, text.indexOf(marker, from))].length;
    assert.deepEqual(
      fileCitations(text, sources).map((a) => [a.file_id, a.index]),
      [
        ['file-1', at('[1]')],
        ['file-1', at('[1][2]')],
        ['file-2', at('[2]', text.indexOf('[1][2]'))],
        ['file-2', at('[2, 1]')],
        ['file-1', at('[2, 1]')],
      ],
    );
    assert.equal(at('[1]'), text.indexOf('[1]') - 1, 'the emoji counts once');
    assert.deepEqual(fileCitations(text, new Map()), []);
  });

  test('queriesOf: query then queries, trimmed, without repeats or empties, at most five; anything else none', () => {
    assert.deepEqual(queriesOf('{"query":" refunds ","queries":["refunds","returns","",7,"a","b","c","d"]}'), ['refunds', 'returns', 'a', 'b', 'c']);
    assert.deepEqual(queriesOf('{"queries":["x"]}'), ['x']);
    assert.deepEqual(queriesOf('not json'), []);
    assert.deepEqual(queriesOf('["query"]'), []);
  });

  test('the tool numbers passages on across calls, searches every query together, and reports a failed search to the model and the item', async () => {
    const calls: SearchOptions[] = [];
    let fail = false;
    const search: VectorSearch = {
      async search(_account, _ids, options) {
        calls.push(options);
        if (fail) throw new Error('index unavailable');
        return [{ file_id: 'f', filename: 'a\nb.md', score: 0.5, attributes: null, content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }];
      },
      storeStates: async (_account, ids) => new Map(ids.map((id) => [id, 'active' as const])),
    };
    const warned: unknown[] = [];
    const tool = fileSearchTool(search, 'acct', { vectorStoreIds: ['vs'], maxResults: 3, filters: null }, { warn: (obj) => warned.push(obj) });
    const signal = new AbortController().signal;
    const first = (await tool.run('{"query":"a","queries":["b"]}', signal)) as { text: string; data: any };
    assert.deepEqual(calls[0], { query: ['a', 'b'], maxResults: 3, filters: null });
    assert.equal(first.text, 'Found 1 passage in the files for "a", "b". Cite a passage as [n] right after what it supports.\n\n[1] a b.md (score 0.50)\none\ntwo');
    assert.deepEqual(first.data, { queries: ['a', 'b'], status: 'completed', first: 1, results: [{ file_id: 'f', filename: 'a\nb.md', score: 0.5, attributes: null, text: 'one\ntwo' }] });
    const second = (await tool.run('{"query":"c"}', signal)) as { text: string; data: any };
    assert.match(second.text, /^\[2\] /m);
    assert.equal(second.data.first, 2);
    fail = true;
    const failed = (await tool.run('{"query":"d"}', signal)) as { text: string; data: any };
    assert.equal(failed.data.status, 'failed');
    assert.match(failed.text, /failed/);
    assert.equal(warned.length, 1);
    const empty = (await tool.run('{}', signal)) as { text: string; data: any };
    assert.equal(empty.data.status, 'failed');
    assert.equal(calls.length, 3, 'no query, no search');
  });
});
