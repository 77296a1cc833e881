// Moderations on an OpenAI-compatible upstream (UPSTREAM_MODERATION=upstream), through the
// official openai SDK: a list goes as one list (agent-moderation as omni-moderation-latest),
// the upstream's scores come back flagged at our thresholds with its applied input types,
// a category it does not score (a text-moderation model's `illicit`) scores 0 applied to
// nothing, the Moderate requests switch asks it too, and an upstream failure is a 502 in
// our words.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { MODERATION_CATEGORIES } from '../../contract/endpoints/moderations.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';

/** A result as OpenAI's omni-moderation-latest answers (every category; `violence` high for a threat). */
function openaiResult(text: string, model: string) {
  const threat = /kill/i.test(text);
  const scores = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, 0.000012]));
  if (threat) Object.assign(scores, { violence: 0.93, harassment: 0.41, 'harassment/threatening': 0.62 });
  const result: Record<string, unknown> = {
    flagged: threat,
    categories: Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, scores[c]! > 0.5])),
    category_scores: scores,
    category_applied_input_types: Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, ['violence', 'sexual', 'self-harm'].some((p) => c.startsWith(p)) && c !== 'sexual/minors' ? ['text', 'image'] : ['text']])),
  };
  if (model.startsWith('text-moderation')) {
    // The legacy models score no illicit categories and send no applied types.
    for (const c of ['illicit', 'illicit/violent']) {
      delete (result.category_scores as Record<string, unknown>)[c];
      (result.categories as Record<string, unknown>)[c] = null;
    }
    delete result.category_applied_input_types;
  }
  return result;
}

let upstream: FakeUpstream;
let server: TestServer;
let key: string;
before(async () => {
  upstream = await startFakeUpstream((req, res: ServerResponse) => {
    const body = req.body as { model: string; input: string | string[] | { type: string; text?: string }[] };
    if (JSON.stringify(body.input).includes('secret words')) {
      res.writeHead(500, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: `internal failure for ${JSON.stringify(body.input)}`, type: 'server_error', code: null } }));
    }
    const list = typeof body.input === 'string' ? [body.input] : body.input.every((x) => typeof x === 'string') ? (body.input as string[]) : [(body.input as { text?: string }[]).map((p) => p.text ?? '').join(' ')];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'modr-6a0f3b1c', model: body.model === 'omni-moderation-latest' ? 'omni-moderation-2024-09-26' : body.model, results: list.map((t) => openaiResult(t, body.model)) }));
  });
  server = await startTestServer({ UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_MODEL_AGENT: 'gpt-4o-mini', UPSTREAM_MODERATION: 'upstream', MODERATION_THRESHOLDS: 'violence=0.9' });
  key = (await server.createKey({})).key;
});
after(async () => {
  await server.close();
  await upstream.close();
});

test("a list goes as one list; the upstream's scores flagged at our thresholds, its applied types kept", async () => {
  upstream.requests.length = 0;
  const res = await server.openai(key).moderations.create({ model: 'agent-moderation', input: ['I will kill you.', 'Lovely weather.'] });
  validateAgainst('CreateModerationResponse', res);
  assert.equal(res.model, 'agent-moderation');
  assert.equal(upstream.requests.length, 1);
  assert.equal(upstream.requests[0]!.url, '/v1/moderations');
  assert.deepEqual(upstream.requests[0]!.body, { model: 'omni-moderation-latest', input: ['I will kill you.', 'Lovely weather.'] });
  const [threat, clean] = res.results;
  assert.equal(threat!.category_scores.violence, 0.93);
  assert.equal(threat!.categories.violence, true);
  // 0.62 is over the default 0.5; 0.41 is not.
  assert.equal(threat!.categories['harassment/threatening'], true);
  assert.equal(threat!.categories.harassment, false);
  assert.deepEqual(threat!.category_applied_input_types.violence, ['text', 'image']);
  assert.equal(clean!.flagged, false);
});

test('a text-moderation model: unscored categories score 0 applied to nothing', async () => {
  const res = await server.openai(key).moderations.create({ model: 'text-moderation-latest', input: 'fine' });
  const [r] = res.results;
  assert.equal(r!.category_scores.illicit, 0);
  assert.deepEqual(r!.category_applied_input_types.illicit, []);
  assert.deepEqual(r!.category_applied_input_types.hate, ['text']);
});

test('the Moderate requests switch asks the upstream too', async () => {
  upstream.requests.length = 0;
  const { key: moderated } = await server.createKey({ permissions: { moderate: true } });
  await assert.rejects(server.openai(moderated).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'I will kill you.' }] }), (e: any) => e.status === 400 && e.error?.code === 'content_flagged');
  assert.ok(upstream.requests.some((r) => r.url === '/v1/moderations'));
  assert.ok(!upstream.requests.some((r) => r.url === '/v1/chat/completions'), 'no model ran');
});

test("an upstream failure is a 502 in our words", async () => {
  await assert.rejects(server.openai(key).moderations.create({ input: 'secret words here' }), (e: any) => {
    assert.equal(e.status, 502);
    // In our words, with the upstream's status; its own message only bounded and scrubbed (issue 18).
    assert.match(e.error.message, /upstream/);
    assert.match(e.error.message, /500/);
    return true;
  });
});
