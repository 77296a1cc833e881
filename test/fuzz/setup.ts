// Set-up over HTTP, through the service's own APIs: two accounts with credits and keys
// (A with every switch; B limited, in another account, and a key of B's with only the AI
// gateway switch), the operations of the four roots from their contracts, objects each
// key owns (by sending every create operation's base body; on the gateway, requests whose
// ids /generation reads), the ids each key can read, and a check that every operation's
// base request is accepted.
import { buildCapabilities } from '../../src/contract/capabilities.ts';
import { GATEWAY, MESSAGES } from '../../src/contract/roots.ts';
import { ALL_SWITCHES } from '../helpers/test-server.ts';
import { SchemaSet } from './json-schema.ts';
import { rootOperations, type Operation } from './operations.ts';
import { sendRaw } from './raw-http.ts';
import { baseBody, baseForm, formRequest, ownPath, request, schemasOf, whoFor, type IdPool, type Who, type World } from './world.ts';

export interface Setup {
  world: World;
  accounts: { A: string; B: string };
  /** operations whose base request was not answered 2xx, and why */
  baseRefused: string[];
  /** key B's objects as B reads them, to compare after the run */
  bObjects: { path: string; body: string }[];
  /**
   * The key the Responses WebSocket messages are sent with: account A's, with A's
   * switches; its own, so the ledger check can tell the messages' charges from the POSTs'
   * (a message that ran has no X-Request-Id to name its charge by).
   */
  websocketKey: { id: string; secret: string };
}

/** The key of account B that may use the gateway (key B has no switch), for /generation across accounts. */
const GATEWAY_B_KEY = { name: 'fuzz B gateway', permissions: { ai_gateway: true } };

/** `bearer` null: no key (a public document). */
async function call(origin: string, method: string, path: string, bearer: string | null, body?: unknown) {
  const res = await fetch(origin + path, {
    method,
    headers: { ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

export async function setUp(origin: string, port: number, adminToken: string, bodyLimit: number): Promise<Setup> {
  const admin = (method: string, path: string, body?: unknown) => call(origin, method, `/admin/v1${path}`, adminToken, body);
  const must = async (p: ReturnType<typeof admin>, what: string) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`set-up: ${what}: ${r.status} ${r.text}`);
    return r.json;
  };
  const A = await must(admin('POST', '/accounts', { name: 'fuzz-A', credits: 1_000_000 }), 'account A');
  const B = await must(admin('POST', '/accounts', { name: 'fuzz-B', credits: 100_000 }), 'account B');
  const keyA = await must(admin('POST', '/keys', { account_id: A.id, name: 'fuzz A', permissions: ALL_SWITCHES }), 'key A');
  const keyB = await must(admin('POST', '/keys', { account_id: B.id, name: 'fuzz B', models: ['agent'], max_output_tokens: 64 }), 'key B');
  const keyW = await must(admin('POST', '/keys', { account_id: A.id, name: 'fuzz A websocket', permissions: ALL_SWITCHES }), 'key A for the WebSocket');
  const keyBG = await must(admin('POST', '/keys', { account_id: B.id, ...GATEWAY_B_KEY }), 'key B for the gateway');

  const doc = await must(call(origin, 'GET', '/v1/openapi.json', keyA.key), 'openapi.json');
  const caps = await must(call(origin, 'GET', '/v1/capabilities', keyA.key), 'capabilities');
  const adminDoc = await must(call(origin, 'GET', '/admin/v1/openapi.json', adminToken), 'admin openapi.json');
  // Its document is public: fetched without a key, as a client would.
  const messagesDoc = await must(call(origin, 'GET', `${MESSAGES.prefix}/openapi.json`, null), 'messages openapi.json');
  // The messages root publishes no /capabilities: its refused fields are classified from its contract tables, as /v1/capabilities is.
  const messagesCaps = buildCapabilities(MESSAGES.endpoints, MESSAGES.prefix);
  // Public too; its forwarded bodies have no schema (the upstream judges them), so it classifies no field.
  const gatewayDoc = await must(call(origin, 'GET', `${GATEWAY.prefix}/openapi.json`, null), 'gateway openapi.json');
  const ops: Operation[] = [
    ...rootOperations(doc, 'v1', '/v1', caps),
    ...rootOperations(adminDoc, 'admin', '/admin/v1'),
    ...rootOperations(messagesDoc, 'messages', MESSAGES.prefix, messagesCaps),
    ...rootOperations(gatewayDoc, 'gateway', GATEWAY.prefix),
  ];

  const modelsOf = async (key: string, root = '/v1') => ((await must(call(origin, 'GET', `${root}/models`, key), `${root}/models`)).data as { id: string }[]).map((m) => m.id);
  const world: World = {
    v1: new SchemaSet(doc.components.schemas),
    admin: new SchemaSet(adminDoc.components.schemas),
    messages: new SchemaSet(messagesDoc.components.schemas),
    gateway: new SchemaSet(gatewayDoc.components.schemas),
    ops,
    secrets: { A: keyA.key, B: keyB.key, admin: adminToken },
    models: { A: await modelsOf(keyA.key), B: await modelsOf(keyB.key) },
    messagesModels: { A: await modelsOf(keyA.key, MESSAGES.prefix), B: await modelsOf(keyB.key, MESSAGES.prefix) },
    gatewayB: keyBG.key,
    generations: { A: [], B: [] },
    ids: new Map(),
    baseOk: new Map(),
    baseQuery: new Map(),
    bodyLimit,
    seq: { n: 0 },
  };
  const pool = (coll: string): IdPool => {
    let p = world.ids.get(coll);
    if (!p) world.ids.set(coll, (p = { A: [], B: [], admin: [] }));
    return p;
  };
  // A multipart operation's body is sent as its form.
  const send = async (op: Operation, who: Who, body: unknown, path?: string, headers?: [string, string | null][]) => {
    const at = { ...(path ? { path } : {}), ...(headers ? { headers } : {}) };
    const raw = op.body?.media === 'multipart' && body !== undefined ? formRequest(world, op, who, baseForm(world, op, who), at) : request(world, op, who, { ...at, body: body === undefined ? null : Buffer.from(JSON.stringify(body)) });
    const r = await sendRaw(port, raw, 30_000);
    if (r.kind !== 'response') return { status: 0, json: null as any, text: r.kind, headers: {} as Record<string, string> };
    const text = r.response.body.toString('utf8');
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: r.response.status, json, text, headers: r.response.headers };
  };

  // Objects to point path parameters at: what each create operation (a POST on a
  // collection) returns, with `store: true` where the body takes it. Creates that need
  // another collection's id (admin keys need an account) go last.
  // (The messages root's POSTs create nothing that can be read back; the gateway's are sent below.)
  const creates = ops
    .filter((o) => o.method === 'POST' && o.pathParams.length === 0 && o.body !== null && o.surface !== 'messages' && o.surface !== 'gateway')
    .sort((a, b) => Number(JSON.stringify(a.body!.required).includes('_id')) - Number(JSON.stringify(b.body!.required).includes('_id')));
  for (const op of creates) {
    const storable = 'store' in schemasOf(world, op).objectShape(op.body!.schema).properties;
    const callers: Who[] = op.surface === 'admin' ? ['admin', 'admin'] : ['A', 'A', 'A', 'B', 'B'];
    for (const who of callers) {
      const r = await send(op, who, { ...baseBody(world, op, who), ...(storable ? { store: true } : {}) });
      if (r.status < 300 && typeof r.json?.id === 'string') pool(op.path)[who].push(r.json.id);
    }
  }
  // Lists (GET on a collection) name more ids: models, for one.
  for (const op of ops.filter((o) => o.surface !== 'admin' && o.surface !== 'gateway' && o.method === 'GET' && o.pathParams.length === 0 && o.auth === 'key')) {
    for (const who of ['A', 'B'] as const) {
      const r = await send(op, who, undefined);
      for (const item of Array.isArray(r.json?.data) ? r.json.data : []) if (typeof item?.id === 'string' && !pool(op.path)[who].includes(item.id)) pool(op.path)[who].push(item.id);
    }
  }
  // Which ids each key can actually read: B's stored objects are not A's.
  const bObjects: Setup['bObjects'] = [];
  for (const op of ops.filter((o) => o.surface !== 'admin' && o.method === 'GET' && o.pathParams.length === 1)) {
    const param = op.pathParams[0]!;
    const coll = op.path.slice(0, op.path.indexOf(`/{${param}}`));
    const p = world.ids.get(coll);
    if (!p || op.path !== `${coll}/{${param}}`) continue;
    const all = [...new Set([...p.A, ...p.B])];
    const readable = { A: [] as string[], B: [] as string[] };
    for (const id of all) {
      const path = op.path.replace(`{${param}}`, encodeURIComponent(id));
      for (const who of ['A', 'B'] as const) {
        const r = await send(op, who, undefined, path);
        if (r.status === 200) {
          readable[who].push(id);
          if (who === 'B' && !p.A.includes(id)) bObjects.push({ path, body: r.text });
        }
      }
    }
    p.A = readable.A;
    p.B = readable.B;
  }
  // Admin path ids: only objects the admin set-up above created, never A's or B's.
  for (const [coll, p] of world.ids) if (coll.startsWith('/admin/')) p.A = p.B = [];

  await gatewaySetUp(world, ops, send, pool);

  // The base request of every operation must be accepted, or nothing can be said about
  // which field a refusal names. (Deletes are left out: they would use the object up.)
  const baseRefused: string[] = [];
  for (const op of ops) {
    if (op.method === 'DELETE') {
      world.baseOk.set(op.id, true);
      continue;
    }
    const who = whoFor(op);
    const r = await send(op, who, op.body ? baseBody(world, op, who) : undefined, ownPath(world, op, who));
    world.baseOk.set(op.id, r.status >= 200 && r.status < 300);
    if (!world.baseOk.get(op.id)) baseRefused.push(`${op.id}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  return { world, accounts: { A: A.id, B: B.id }, baseRefused, bObjects, websocketKey: { id: keyW.id, secret: keyW.key } };
}

/**
 * The gateway root: path values its upstream knows (a model's author and slug from the
 * upstream's list, and the image operation), and requests of key A and of account B's
 * gateway key whose ids (the upstream's generation id, and ours) only their maker may
 * read at /generation.
 */
async function gatewaySetUp(
  world: World,
  ops: readonly Operation[],
  send: (op: Operation, who: Who, body: unknown, path?: string, headers?: [string, string | null][]) => Promise<{ status: number; json: any; text: string; headers: Record<string, string> }>,
  pool: (coll: string) => IdPool,
): Promise<void> {
  const gateway = ops.filter((o) => o.surface === 'gateway');
  const models = gateway.find((o) => o.method === 'GET' && o.passthrough && o.pathParams.length === 0 && o.path.endsWith('/models'));
  const listed = models ? await send(models, 'A', undefined) : null;
  const ids: string[] = (Array.isArray(listed?.json?.data) ? listed.json.data : []).map((m: { id?: unknown }) => m.id).filter((id: unknown): id is string => typeof id === 'string' && id.includes('/'));
  for (const op of gateway) {
    // Each path parameter takes the value its upstream knows: {author}/{slug} of a listed model, an image operation.
    op.pathParams.forEach((param, i) => {
      const coll = op.path.slice(0, op.path.indexOf(`/{${param}}`));
      const value = param === 'operation' ? 'generations' : ids[0]?.split('/')[Math.min(i, 1)];
      if (value === undefined) return;
      pool(coll).A.push(value);
      pool(coll).B.push(value);
    });
  }
  const chat = gateway.find((o) => o.method === 'POST' && o.passthrough && o.path.endsWith('/chat/completions'));
  if (!chat) return;
  const makers: { who: 'A' | 'B'; headers: [string, string | null][] }[] = [
    { who: 'A', headers: [] },
    { who: 'A', headers: [] },
    { who: 'B', headers: [['Authorization', `Bearer ${world.gatewayB}`]] },
  ];
  for (const { who, headers } of makers) {
    const r = await send(chat, who, baseBody(world, chat, 'A'), undefined, headers);
    if (r.status !== 200) throw new Error(`set-up: a gateway chat completion as ${who}: ${r.status} ${r.text.slice(0, 300)}`);
    const made = world.generations[who];
    for (const id of [r.headers['x-generation-id'], r.json?.id, r.headers['x-request-id']]) if (typeof id === 'string' && !made.includes(id)) made.push(id);
  }
  // A lookup by `?id=` (/generation) asks, in its base request, for one of key A's own.
  const [mine] = world.generations.A;
  for (const op of gateway) if (op.auth === 'key' && 'id' in op.query && mine) world.baseQuery.set(op.id, `id=${encodeURIComponent(mine)}`);
}
