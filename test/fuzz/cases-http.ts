// Categories that break the request around the body: query strings, content types,
// multipart, headers, paths, methods, keys, sizes, and ids of another account.
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Case, Category, Expect } from './case.ts';
import type { JsonSchema } from './json-schema.ts';
import type { Operation } from './operations.ts';
import type { RawRequest } from './raw-http.ts';
import { baseBody, baseRequest, fillPath, ownPath, request, schemasOf, whoFor, type Who, type World } from './world.ts';

const enc = encodeURIComponent;

function baseJson(world: World, op: Operation, who: Who): Buffer | null {
  return op.body?.media === 'json' ? Buffer.from(JSON.stringify(baseBody(world, op, who))) : null;
}

function mk(category: Category, op: Operation, who: Who | 'none', note: string, expect: Expect, build: () => RawRequest): Case {
  return { category, op, who, note, expect, build };
}

// --- query strings -------------------------------------------------------------

/** Query values coerce the way the service's zod schemas do: numbers through Number(). */
const coercing = new Ajv2020({ strict: false, validateFormats: false });
const queryValidators = new WeakMap<object, (v: unknown) => boolean>();

function queryValid(schema: JsonSchema, value: unknown, resolve: (s: unknown) => JsonSchema): boolean {
  const s = resolve(schema);
  const numeric = s.type === 'integer' || s.type === 'number';
  const v = numeric && (typeof value === 'string' || Array.isArray(value)) ? Number(value) : value;
  if (numeric && typeof v === 'number' && Number.isNaN(v)) return false;
  let fn = queryValidators.get(s);
  if (!fn) {
    const compiled = coercing.compile(s);
    fn = (x) => compiled(x) as boolean;
    queryValidators.set(s, fn);
  }
  try {
    return fn(v);
  } catch {
    return false;
  }
}

/** A query string plus what the service's parser makes of it (for the oracle). */
interface QueryPlan {
  text: string;
  /** the param at fault and its parsed value; null when the oracle has nothing to say */
  judged: { param: string; value: unknown } | null;
}

function queryPlans(op: Operation): fc.Arbitrary<QueryPlan> | null {
  const names = Object.keys(op.query);
  if (names.length === 0) return null;
  const scalars = ['', ' ', 'abc', '0', '-1', '1.5', '101', '1001', '1e308', '-1e308', 'NaN', 'Infinity', '0x10', '1e2', 'null', 'true', 'asc', 'DESC', 'ключ', 'x'.repeat(4_000)];
  const raw = ['%FF', '%00', '%', '%zz', '%E0%A4%A', '%F0%9F%98%80', '+', '%2B1'];
  return fc.oneof(
    fc.tuple(fc.constantFrom(...names), fc.constantFrom(...scalars)).map(([n, v]) => ({ text: `${enc(n)}=${enc(v)}`, judged: { param: n, value: v } })),
    fc.tuple(fc.constantFrom(...names), fc.constantFrom(...raw)).map(([n, v]) => ({ text: `${enc(n)}=${v}`, judged: null })),
    // A repeated param arrives as a list.
    fc.tuple(fc.constantFrom(...names), fc.constantFrom('1', 'asc', 'x'), fc.integer({ min: 2, max: 50 })).map(([n, v, k]) => ({
      text: Array.from({ length: k }, () => `${enc(n)}=${enc(v)}`).join('&'),
      judged: { param: n, value: Array.from({ length: k }, () => v) },
    })),
    fc.tuple(fc.constantFrom(...names), fc.constantFrom('[]', '[a]', '[a][b]', '[', ']', '[%FF]')).map(([n, br]) => ({ text: `${enc(n)}${br}=1`, judged: null })),
    // deepObject maps (metadata[k]=v): too many entries, long keys and values.
    fc.tuple(fc.constantFrom(...names), fc.constantFrom(17, 100, 2_000), fc.constantFrom(1, 65, 600)).map(([n, count, len]) => ({
      text: Array.from({ length: count }, (_, i) => `${enc(n)}[k${i}${'k'.repeat(Math.max(0, len - 1))}]=${'v'.repeat(len)}`).join('&'),
      judged: null,
    })),
  );
}

function queryCategories(world: World, op: Operation): Partial<Record<Category, fc.Arbitrary<Case>>> {
  const who = whoFor(op);
  const set = schemasOf(world, op);
  const out: Partial<Record<Category, fc.Arbitrary<Case>>> = {};
  const plans = queryPlans(op);
  if (plans) {
    out['query-hostile'] = plans.map((plan) => {
      let expect: Expect = {};
      // Past the HTTP parser's header limit (16 KB) the URL is an HTTP-level matter.
      if (plan.text.length > 12_000) expect = { parserLevel: true };
      else if (plan.judged && world.baseOk.get(op.id)) {
        const schema = op.query[plan.judged.param]!;
        // The admin API reads a repeated param as a list too; objects only come from brackets.
        if (!queryValid(schema, plan.judged.value, (s) => set.resolve(s))) expect = { refuse: true, param: { field: plan.judged.param, exact: false } };
      }
      return mk('query-hostile', op, who, `?${plan.text.length > 120 ? `${plan.text.slice(0, 120)}… (${plan.text.length} chars)` : plan.text}`, expect, () =>
        // The operation's valid body (a form on a multipart route), so the query is the only fault.
        baseRequest(world, op, who, { query: plan.text }),
      );
    });
  }
  const protoQueries = (marker: string) => [
    `__proto__[${marker}]=1`,
    `constructor[prototype][${marker}]=1`,
    `metadata[__proto__]=${marker}`,
    `metadata[__proto__][${marker}]=1`,
    `__proto__=${marker}`,
    `%5F%5Fproto%5F%5F[${marker}]=1`,
    `__proto__%5B${marker}%5D=1`,
    `toString=${marker}`,
    `hasOwnProperty=${marker}`,
    `metadata[hasOwnProperty]=${marker}`,
    `metadata[constructor]=${marker}`,
    `limit[__proto__]=${marker}`,
    `__proto__[${marker}]=1&__proto__[${marker}]=2`,
    `prototype[${marker}]=1`,
  ];
  out['proto-query'] = fc.tuple(fc.nat({ max: 13 }), fc.nat()).map(([i, salt]) => {
    const text = protoQueries(`fzp${salt}`)[i]!;
    return mk('proto-query', op, who, `?${text}`, {}, () => baseRequest(world, op, who, { query: text }));
  });
  return out;
}

// --- content types and multipart --------------------------------------------------

const NOT_JSON = ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/octet-stream', 'image/png', 'multipart/mixed'];
const ODD_JSON = ['application/json; charset=utf-16', 'application/json; charset=latin1', 'APPLICATION/JSON', 'application/json;;', 'application/json, text/plain', 'application/vnd.api+json', '*/*', 'application/json\t', 'application/jsonx', 'application/json; boundary=x', 'application/json; charset="utf-8"', ' application/json'];

function contentTypeCategories(world: World, op: Operation): Partial<Record<Category, fc.Arbitrary<Case>>> {
  const who = whoFor(op);
  const hasBody = op.body !== null;
  const body = () => baseJson(world, op, who) ?? Buffer.from('{"fz":1}');
  const out: Partial<Record<Category, fc.Arbitrary<Case>>> = {};
  out['content-type'] = fc.oneof(
    fc.constantFrom(...NOT_JSON).map((ct) =>
      mk('content-type', op, who, `Content-Type: ${ct} with a JSON body`, hasBody ? { refuse: true } : {}, () => request(world, op, who, { body: body(), headers: [['Content-Type', ct]] })),
    ),
    fc.constantFrom(...ODD_JSON).map((ct) => mk('content-type', op, who, `Content-Type: ${JSON.stringify(ct)}`, {}, () => request(world, op, who, { body: body(), headers: [['Content-Type', ct]] }))),
    // Text, as a parser for it would read it: bytes that are not UTF-8 must reach a proxy's upstream unchanged all the same.
    fc.constant(
      mk('content-type', op, who, 'Content-Type: text/plain with bytes that are not UTF-8', hasBody ? { refuse: true } : {}, () =>
        request(world, op, who, { body: Buffer.concat([Buffer.from('{"fz":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"}')]), headers: [['Content-Type', 'text/plain; charset=utf-8']] }),
      ),
    ),
    fc.constant(mk('content-type', op, who, 'a JSON body without Content-Type', hasBody ? { refuse: true } : {}, () => request(world, op, who, { body: body(), headers: [['Content-Type', null]] }))),
    fc.constant(
      mk('content-type', op, who, 'Content-Type twice (json, text/plain)', {}, () =>
        request(world, op, who, { body: body(), headers: [['Content-Type', 'application/json']], extraHeaders: [['Content-Type', 'text/plain']] }),
      ),
    ),
    fc.constant(mk('content-type', op, who, 'Content-Type: application/json with an empty body', hasBody && (op.body?.required.length ?? 0) > 0 ? { refuse: true } : {}, () => request(world, op, who, { body: Buffer.alloc(0), headers: [['Content-Type', 'application/json']] }))),
  );

  const boundary = 'fzboundary';
  const multiparts: { note: string; ct: string; body: () => Buffer }[] = [
    { note: 'no boundary parameter', ct: 'multipart/form-data', body: () => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nagent\r\n--${boundary}--\r\n`) },
    { note: 'boundary that never appears', ct: `multipart/form-data; boundary=${boundary}`, body: () => Buffer.from('just some text\r\n') },
    { note: 'unterminated part', ct: `multipart/form-data; boundary=${boundary}`, body: () => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc`) },
    { note: 'part without headers', ct: `multipart/form-data; boundary=${boundary}`, body: () => Buffer.from(`--${boundary}\r\n\r\nvalue\r\n--${boundary}--\r\n`) },
    { note: 'part header of 64 KB', ct: `multipart/form-data; boundary=${boundary}`, body: () => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${'n'.repeat(65_536)}"\r\n\r\nv\r\n--${boundary}--\r\n`) },
    { note: '5,000 empty parts', ct: `multipart/form-data; boundary=${boundary}`, body: () => Buffer.from(`${`--${boundary}\r\nContent-Disposition: form-data; name="f"\r\n\r\n\r\n`.repeat(5_000)}--${boundary}--\r\n`) },
    { note: 'boundary of 200 characters', ct: `multipart/form-data; boundary=${'b'.repeat(200)}`, body: () => Buffer.from(`--${'b'.repeat(200)}\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--${'b'.repeat(200)}--\r\n`) },
    { note: 'non-Latin-1 field name and filename', ct: `multipart/form-data; boundary=${boundary}`, body: () => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="ключ"; filename="名前.txt"\r\nContent-Type: text/plain\r\n\r\nx\r\n--${boundary}--\r\n`) },
    { note: 'JSON body labelled multipart', ct: `multipart/form-data; boundary=${boundary}`, body: body },
  ];
  out['broken-multipart'] = fc.constantFrom(...multiparts).map((m) =>
    mk('broken-multipart', op, who, `multipart: ${m.note}`, hasBody ? { refuse: true } : {}, () => request(world, op, who, { body: m.body(), headers: [['Content-Type', m.ct]] })),
  );
  return out;
}

// --- headers (over a raw socket) -----------------------------------------------------

interface HeaderVariant {
  note: string;
  expect: Expect;
  build: (base: RawRequest) => RawRequest;
}

const withHeaders = (base: RawRequest, headers: [string, string][]): RawRequest => ({ ...base, headers: [...base.headers, ...headers] });
const parser: Expect = { parserLevel: true };

function headerVariants(op: Operation): HeaderVariant[] {
  const keyed = op.auth !== 'none';
  return [
    { note: 'X-Client-Request-Id with \\x01', expect: parser, build: (b) => withHeaders(b, [['X-Client-Request-Id', 'abc\x01def']]) },
    { note: 'X-Client-Request-Id with \\x7f', expect: parser, build: (b) => withHeaders(b, [['X-Client-Request-Id', 'abc\x7fdef']]) },
    { note: 'X-Client-Request-Id with a tab', expect: { refuse: true }, build: (b) => withHeaders(b, [['X-Client-Request-Id', 'abc\tdef']]) },
    { note: 'X-Client-Request-Id of 513 characters', expect: { refuse: true }, build: (b) => withHeaders(b, [['X-Client-Request-Id', 'r'.repeat(513)]]) },
    { note: 'X-Client-Request-Id of 8,000 characters', expect: { refuse: true }, build: (b) => withHeaders(b, [['X-Client-Request-Id', 'r'.repeat(8_000)]]) },
    { note: 'X-Client-Request-Id with Latin-1 bytes', expect: { refuse: true }, build: (b) => withHeaders(b, [['X-Client-Request-Id', 'caf\xe9']]) },
    { note: 'X-Client-Request-Id with UTF-8 bytes', expect: { refuse: true }, build: (b) => withHeaders(b, [['X-Client-Request-Id', Buffer.from('ключ').toString('latin1')]]) },
    { note: 'X-Client-Request-Id empty', expect: {}, build: (b) => withHeaders(b, [['X-Client-Request-Id', '']]) },
    { note: 'X-Client-Request-Id twice', expect: {}, build: (b) => withHeaders(b, [['X-Client-Request-Id', 'one'], ['X-Client-Request-Id', 'two']]) },
    { note: 'a header of 20 KB', expect: parser, build: (b) => withHeaders(b, [['X-Fz', 'h'.repeat(20_000)]]) },
    { note: 'a header name of 20 KB', expect: parser, build: (b) => withHeaders(b, [[`X-${'n'.repeat(20_000)}`, '1']]) },
    { note: '3,000 headers', expect: parser, build: (b) => withHeaders(b, Array.from({ length: 3_000 }, (_, i) => [`X-Fz-${i}`, 'v'] as [string, string])) },
    { note: 'Content-Length: abc', expect: parser, build: (b) => withHeaders(b, [['Content-Length', 'abc']]) },
    { note: 'Content-Length: -1', expect: parser, build: (b) => withHeaders(b, [['Content-Length', '-1']]) },
    { note: 'Content-Length: 1e3', expect: parser, build: (b) => withHeaders(b, [['Content-Length', '1e3']]) },
    { note: 'two different Content-Lengths', expect: parser, build: (b) => withHeaders(b, [['Content-Length', String(b.body?.length ?? 0)], ['Content-Length', String((b.body?.length ?? 0) + 1)]]) },
    {
      note: 'Content-Length shorter than the body',
      expect: op.body ? { refuse: true } : {},
      build: (b) => ({ ...withHeaders(b, [['Content-Length', String(Math.max(1, (b.body?.length ?? 10) - 5))]]), body: b.body ?? Buffer.from('{"fz": 12345}') }),
    },
    {
      note: 'Content-Length longer than the body, then end of stream',
      expect: parser,
      build: (b) => ({ ...withHeaders(b, [['Content-Length', String((b.body?.length ?? 0) + 100)]]), body: b.body ?? Buffer.from('{}'), endAfterWrite: true }),
    },
    {
      note: 'Transfer-Encoding: chunked, well formed',
      expect: {},
      build: (b) => ({ ...withHeaders(b, [['Transfer-Encoding', 'chunked']]), body: chunked(b.body ?? Buffer.from('{}')) }),
    },
    { note: 'Transfer-Encoding: chunked with chunk size zz', expect: parser, build: (b) => ({ ...withHeaders(b, [['Transfer-Encoding', 'chunked']]), body: Buffer.from('zz\r\n{}\r\n0\r\n\r\n') }) },
    { note: 'Transfer-Encoding: chunked with a chunk longer than declared', expect: parser, build: (b) => ({ ...withHeaders(b, [['Transfer-Encoding', 'chunked']]), body: Buffer.from('2\r\n{"a":1}\r\n0\r\n\r\n') }) },
    {
      note: 'Transfer-Encoding: chunked and Content-Length',
      expect: parser,
      build: (b) => ({ ...withHeaders(b, [['Transfer-Encoding', 'chunked'], ['Content-Length', '2']]), body: chunked(b.body ?? Buffer.from('{}')) }),
    },
    { note: 'Transfer-Encoding: gzip', expect: parser, build: (b) => ({ ...withHeaders(b, [['Transfer-Encoding', 'gzip']]), body: b.body ?? Buffer.from('{}') }) },
    { note: 'Transfer-Encoding: chunked, chunked', expect: parser, build: (b) => ({ ...withHeaders(b, [['Transfer-Encoding', 'chunked, chunked']]), body: chunked(b.body ?? Buffer.from('{}')) }) },
    { note: 'Content-Encoding: gzip on a plain body', expect: {}, build: (b) => withHeaders(b, [['Content-Encoding', 'gzip']]) },
    { note: 'Expect: 100-continue', expect: {}, build: (b) => withHeaders(b, [['Expect', '100-continue']]) },
    { note: 'Expect: fz-unknown', expect: {}, build: (b) => withHeaders(b, [['Expect', 'fz-unknown']]) },
    // Headers about the caller's connection and route to us, or its credentials elsewhere: a proxy (the gateway) must not pass them on.
    { note: 'Connection: keep-alive, X-Fz-Hop with X-Fz-Hop', expect: {}, build: (b) => withHeaders(b, [['Connection', 'keep-alive, X-Fz-Hop'], ['X-Fz-Hop', '1']]) },
    { note: 'TE: trailers and Keep-Alive: timeout=5', expect: {}, build: (b) => withHeaders(b, [['TE', 'trailers'], ['Keep-Alive', 'timeout=5']]) },
    { note: 'Proxy-Authorization and Cookie', expect: {}, build: (b) => withHeaders(b, [['Proxy-Authorization', 'Basic Zno6Zno='], ['Cookie', 'session=fz']]) },
    { note: 'Forwarded and X-Forwarded-For/-Host/-Proto', expect: {}, build: (b) => withHeaders(b, [['Forwarded', 'for=203.0.113.9;host=evil.example'], ['X-Forwarded-For', '203.0.113.9'], ['X-Forwarded-Host', 'evil.example'], ['X-Forwarded-Proto', 'gopher']]) },
    { note: 'Accept-Encoding: gzip, br', expect: {}, build: (b) => withHeaders(b, [['Accept-Encoding', 'gzip, br']]) },
    { note: 'a header name with a space', expect: parser, build: (b) => withHeaders(b, [['X Fz', '1']]) },
    { note: 'a header line without a colon', expect: parser, build: (b) => withHeaders(b, [['', 'X-Fz-No-Colon']]) },
    { note: 'an obs-fold continuation line', expect: parser, build: (b) => withHeaders(b, [['X-Fz', 'a\r\n folded']]) },
    { note: 'a NUL in a header value', expect: parser, build: (b) => withHeaders(b, [['X-Fz', 'a\x00b']]) },
    { note: 'a bare LF in a header value', expect: parser, build: (b) => withHeaders(b, [['X-Fz', 'a\nX-Injected: 1']]) },
    { note: 'no Host header', expect: {}, build: (b) => ({ ...b, noHost: true }) },
    { note: 'Host header twice', expect: {}, build: (b) => withHeaders(b, [['Host', 'a.example'], ['Host', 'b.example']]) },
    { note: 'Host: with a control character', expect: parser, build: (b) => withHeaders(b, [['Host', 'a\x01b']]) },
    ...(keyed
      ? [
          { note: 'Authorization: Bearer of 8,000 characters', expect: { status: 401 }, build: (b: RawRequest) => auth(b, `Bearer ${'k'.repeat(8_000)}`) },
          { note: 'Authorization: Bearer with Latin-1 bytes', expect: { status: 401 }, build: (b: RawRequest) => auth(b, 'Bearer caf\xe9') },
          { note: 'Authorization: Bearer a b', expect: { status: 401 }, build: (b: RawRequest) => auth(b, 'Bearer a b') },
          { note: 'Authorization: Basic', expect: { status: 401 }, build: (b: RawRequest) => auth(b, 'Basic YTpi') },
          { note: 'Authorization: empty', expect: { status: 401 }, build: (b: RawRequest) => auth(b, '') },
          { note: 'Authorization twice, the valid one first', expect: {}, build: (b: RawRequest) => withHeaders(b, [['Authorization', 'Bearer sk-wrong']]) },
        ]
      : []),
  ];
}

/** The request with `value` as its only credential (the key it had, in Authorization or x-api-key, removed). */
function auth(b: RawRequest, value: string): RawRequest {
  return { ...b, headers: [...b.headers.filter(([n]) => !['authorization', 'x-api-key'].includes(n.toLowerCase())), ['Authorization', value]] };
}

function chunked(body: Buffer): Buffer {
  const half = Math.ceil(body.length / 2);
  const parts = [body.subarray(0, half), body.subarray(half)].filter((p) => p.length > 0);
  return Buffer.concat([...parts.flatMap((p) => [Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]), Buffer.from('0\r\n\r\n')]);
}

// --- paths, methods, keys, sizes, ownership --------------------------------------------

const ID_VARIANTS = ['%FF', '%00', '%2F', '%2e%2e', '..', '%', '%%', '%zz', '%C0%AF', 'a'.repeat(101), 'a'.repeat(1_000), 'a'.repeat(8_000), enc('ключ'), Buffer.from('ключ').toString('latin1'), "'", '%27%20OR%201=1', '%0D%0AX-Injected:%201', 'null', 'undefined', '__proto__', 'constructor', '*', '-1'];

function pathVariants(world: World, op: Operation, who: Who): { note: string; expect: Expect; target: () => string }[] {
  const own = ownPath(world, op, who);
  const out: { note: string; expect: Expect; target: () => string }[] = [];
  for (const p of op.pathParams) {
    for (const v of ID_VARIANTS) {
      const others = Object.fromEntries(op.pathParams.map((q) => [q, q === p ? v : encodeURIComponent(own.split('/').at(-1) ?? 'x')]));
      // The raw UTF-8 bytes are a parser matter; every other variant must be refused in the error shape.
      const isRawBytes = /[\u0080-\u00ff]/.test(v);
      out.push({ note: `{${p}} := ${v.length > 40 ? `${v.slice(0, 12)}… (${v.length})` : JSON.stringify(v)}`, expect: isRawBytes ? parser : { refuse: true }, target: () => fillPath(op, others) });
    }
  }
  const plain = (note: string, target: string, expect: Expect = {}) => out.push({ note, expect, target: () => target });
  plain('a doubled slash', own.replace('/v1/', '/v1//'));
  plain('upper-case root', own.replace('/v1/', '/V1/'), { refuse: true });
  plain('a dot segment', own.replace('/v1/', '/v1/./'));
  plain('a dot-dot segment', own.replace('/v1/', '/v1/x/../'));
  plain('a trailing slash', `${own}/`);
  plain('a matrix parameter', `${own};x=1`);
  plain('a fragment', `${own}#frag`);
  plain('%00 appended', `${own}%00`, { refuse: true });
  plain('%FF appended', `${own}%FF`, { refuse: true });
  plain('an absolute-form target', `http://127.0.0.1${own}`);
  plain('an URL of 20 KB', `${own}?q=${'u'.repeat(20_000)}`, parser);
  plain('an URL of 100 KB', `${own}/${'u'.repeat(100_000)}`, parser);
  plain('a space in the path', `${own.slice(0, 4)} ${own.slice(4)}`, parser);
  plain('a control character in the path', `${own}\x01`, parser);
  plain('a path without the leading slash', own.slice(1), parser);
  plain('target *', '*', parser);
  return out;
}

function httpCategories(world: World, op: Operation): Partial<Record<Category, fc.Arbitrary<Case>>> {
  const who = whoFor(op);
  const body = () => baseJson(world, op, who);
  const out: Partial<Record<Category, fc.Arbitrary<Case>>> = {};

  // JSON bodies are made valid, then broken, by cases-body.ts; a form or no body is sent as it is.
  if (!op.body || op.body.media !== 'json') {
    out.valid = fc.constant(mk('valid', op, who, 'base', {}, () => baseRequest(world, op, who)));
  }

  out['bad-headers'] = fc.constantFrom(...headerVariants(op)).map((v) => mk('bad-headers', op, who, v.note, v.expect, () => v.build(baseRequest(world, op, who))));

  out['bad-path'] = fc.constantFrom(...pathVariants(world, op, who)).map((v) => mk('bad-path', op, who, v.note, v.expect, () => baseRequest(world, op, who, { path: v.target() })));

  const samePath = world.ops.filter((o) => o.path === op.path).map((o) => o.method);
  const allowed = new Set([...samePath, ...(samePath.includes('GET') ? ['HEAD'] : [])]);
  out['wrong-method'] = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'FZ', 'CONNECT', 'get').map((method) =>
    mk('wrong-method', op, who, `${method} ${op.path}`, ['FZ', 'CONNECT', 'get'].includes(method) ? parser : allowed.has(method) ? {} : { refuse: true }, () =>
      baseRequest(world, op, who, { method }),
    ),
  );

  if (op.auth !== 'none') {
    const variants: { note: string; headers: [string, string | null][]; extraHeaders?: [string, string][]; ok?: boolean }[] = [
      { note: 'no Authorization', headers: [['Authorization', null]] },
      { note: 'a wrong key', headers: [['Authorization', 'Bearer sk-agent-fz-wrong-key-0000']] },
      { note: 'the key with its last character changed', headers: [['Authorization', `Bearer ${world.secrets[who].slice(0, -1)}${world.secrets[who].endsWith('x') ? 'y' : 'x'}`]] },
      { note: op.surface === 'admin' ? 'key A on the admin API' : 'the admin token as a key', headers: [['Authorization', `Bearer ${op.surface === 'admin' ? world.secrets.A : world.secrets.admin}`]] },
      { note: 'a wrong x-api-key and no Authorization', headers: [['Authorization', null], ['x-api-key', 'sk-fz-wrong']] },
      { note: 'lower-case bearer', headers: [['Authorization', `bearer ${world.secrets[who]}`]], ok: true },
    ];
    const [a, b] = [world.secrets.A, world.secrets.B];
    // The gateway takes the key in x-api-key too; it must not reach the upstream (the fake upstream checks).
    if (op.surface === 'gateway') variants.push({ note: 'key A in x-api-key only', headers: [['Authorization', null], ['x-api-key', a]], ok: true });
    if (op.surface === 'messages') {
      // Its clients send the key in x-api-key (or Authorization).
      variants.push(
        { note: 'key A in x-api-key only', headers: [['Authorization', null], ['x-api-key', a]], ok: true },
        { note: 'key A in x-api-key and in Authorization', headers: [['Authorization', `Bearer ${a}`], ['x-api-key', a]], ok: true },
        { note: 'an empty x-api-key and no Authorization', headers: [['Authorization', null], ['x-api-key', '']] },
        { note: 'the admin token in x-api-key', headers: [['Authorization', null], ['x-api-key', world.secrets.admin]] },
        { note: 'key A in x-api-key with a space after it', headers: [['Authorization', null], ['x-api-key', `${a} x`]] },
      );
    }
    // The vendor shape has no code: its error type follows from the status (checks.ts).
    const refused: Expect = op.surface === 'messages' ? { status: 401 } : { status: 401, code: 'invalid_api_key' };
    const send = (category: Category, v: (typeof variants)[number]) =>
      mk(category, op, who, v.note, v.ok ? {} : refused, () => baseRequest(world, op, who, { headers: v.headers, ...(v.extraHeaders ? { extraHeaders: v.extraHeaders } : {}) }));
    out['bad-auth'] = fc.constantFrom(...variants).map((v) => send('bad-auth', v));
    if (op.surface === 'messages') {
      // Two keys in one request, every one of them a 401: which key the caller meant is unknowable, so neither is used.
      const conflicting: typeof variants = [
        { note: 'key A in x-api-key, key B in Authorization', headers: [['Authorization', `Bearer ${b}`], ['x-api-key', a]] },
        { note: 'key B in x-api-key, key A in Authorization', headers: [['Authorization', `Bearer ${a}`], ['x-api-key', b]] },
        { note: 'a wrong x-api-key, key A in Authorization', headers: [['Authorization', `Bearer ${a}`], ['x-api-key', 'sk-fz-wrong']] },
        { note: 'key A in x-api-key, a wrong key in Authorization', headers: [['Authorization', 'Bearer sk-fz-wrong'], ['x-api-key', a]] },
        { note: 'key A in x-api-key, key A with its last character changed in Authorization', headers: [['Authorization', `Bearer ${a.slice(0, -1)}${a.endsWith('x') ? 'y' : 'x'}`], ['x-api-key', a]] },
        // Sent twice, the values arrive joined ("A, B"): no key.
        { note: 'x-api-key twice, keys A and B', headers: [['Authorization', null], ['x-api-key', a]], extraHeaders: [['x-api-key', b]] },
      ];
      out['key-headers'] = fc.constantFrom(...conflicting).map((v) => send('key-headers', v));
    }
  }

  if (op.body) {
    const limit = world.bodyLimit;
    out['oversized-body'] = fc.oneof(
      fc.constantFrom(limit + 1, limit + 1_000, Math.floor(limit * 1.5), limit * 3).map((size) =>
        mk('oversized-body', op, who, `JSON body of ${size} bytes (limit ${limit})`, { refuse: true }, () => request(world, op, who, { body: padded(body(), size) })),
      ),
      fc.constantFrom(limit + 1, limit * 2).map((size) =>
        mk('oversized-body', op, who, `chunked JSON body of ${size} bytes (limit ${limit})`, { refuse: true }, () => {
          const r = request(world, op, who, { body: padded(body(), size) });
          return { ...r, headers: [...r.headers, ['Transfer-Encoding', 'chunked']], body: chunked(r.body!) };
        }),
      ),
      fc.constantFrom(limit + 1, 10 * limit, 2 ** 53).map((claimed) =>
        // 2^53 is past what Node's HTTP parser takes: it refuses the request line and headers
        // it may have read from an earlier chunk, so the root (and its shape) can be unknown.
        mk('oversized-body', op, who, `Content-Length: ${claimed} with a small body`, claimed > Number.MAX_SAFE_INTEGER ? { refuse: true, parserLevel: true } : { refuse: true }, () => {
          const r = request(world, op, who, { body: body() ?? Buffer.from('{}') });
          return { ...r, headers: [...r.headers, ['Content-Length', String(claimed)]], endAfterWrite: true };
        }),
      ),
    );
  }

  // Ids another caller owns: setup found ids B can read and A cannot, and the reverse.
  if (op.surface !== 'admin' && op.pathParams.length === 1) {
    const param = op.pathParams[0]!;
    const pool = world.ids.get(op.path.slice(0, op.path.indexOf(`/{${param}}`)));
    const attacks: { who: Who; id: string }[] = [];
    if (pool) {
      for (const id of pool.B) if (!pool.A.includes(id)) attacks.push({ who: 'A', id });
      for (const id of pool.A) if (!pool.B.includes(id)) attacks.push({ who: 'B', id });
    }
    if (attacks.length) {
      out['other-account'] = fc.constantFrom(...attacks).map((a) =>
        // Key B holds no switch: on an endpoint that needs one it is refused (403) before any lookup.
        mk('other-account', op, a.who, `key ${a.who} on {${param}} = ${a.id}, which only key ${a.who === 'A' ? 'B' : 'A'} can read`, { status: a.who === 'B' && op.permission ? 403 : 404 }, () =>
          request(world, op, a.who, { path: fillPath(op, { [param]: enc(a.id) }), body: op.body?.media === 'json' ? Buffer.from(JSON.stringify(baseBody(world, op, a.who))) : null }),
        ),
      );
    }
  }

  // The gateway's /generation by id: key A's requests are not account B's to read, and the reverse.
  if (op.surface === 'gateway' && op.auth === 'key' && 'id' in op.query) {
    const B = world.gatewayB;
    const attacks = [...world.generations.A.map((id) => ({ as: 'B' as const, id })), ...world.generations.B.map((id) => ({ as: 'A' as const, id }))];
    if (attacks.length) {
      out['other-account'] = fc.constantFrom(...attacks).map((x) =>
        mk('other-account', op, x.as, `key ${x.as === 'B' ? "B's gateway key" : 'A'} on ?id=${x.id}, which only key ${x.as === 'B' ? 'A' : "B's gateway key"} made`, { status: 404 }, () =>
          request(world, op, x.as, { query: `id=${enc(x.id)}`, ...(x.as === 'B' ? { headers: [['Authorization', `Bearer ${B}`]] } : {}) }),
        ),
      );
    }
  }

  // The limited key: a model it may not use, or an endpoint whose switch it lacks.
  if (op.surface === 'gateway' && op.auth === 'key') {
    // Key B has no AI gateway switch: refused before anything is forwarded. B's gateway key lacks the endpoint's family switch.
    const variants = [mk('limited-key', op, 'B', "key B lacks the 'ai_gateway' switch", { status: 403, code: 'gateway_not_allowed' }, () => baseRequest(world, op, 'B', { path: ownPath(world, op, 'B') }))];
    if (op.permission) {
      variants.push(
        mk('limited-key', op, 'B', `B's gateway key lacks the '${op.permission}' switch`, { status: 403, code: 'model_not_allowed' }, () =>
          baseRequest(world, op, 'B', { path: ownPath(world, op, 'B'), headers: [['Authorization', `Bearer ${world.gatewayB}`]] }),
        ),
      );
    }
    out['limited-key'] = fc.constantFrom(...variants);
  } else if (op.surface === 'messages') {
    // The root's own model names (any other name runs on its configured model, which key B may use).
    const hasModel = op.body !== null && 'model' in schemasOf(world, op).objectShape(op.body.schema).properties;
    const forbidden = world.messagesModels.A.filter((m) => !world.messagesModels.B.includes(m));
    if (hasModel && forbidden.length) {
      out['limited-key'] = fc.constantFrom(...forbidden).map((model) =>
        mk('limited-key', op, 'B', `key B with model ${model}, which it may not use`, world.baseOk.get(op.id) ? { status: 403, param: { field: 'model', exact: true } } : {}, () =>
          request(world, op, 'B', { path: ownPath(world, op, 'B'), body: Buffer.from(JSON.stringify({ ...baseBody(world, op, 'B'), model })) }),
        ),
      );
    }
  } else if (op.surface === 'v1') {
    const modelField = op.body ? (schemasOf(world, op).objectShape(op.body.schema).properties.model as Record<string, unknown> | undefined) : undefined;
    const hasModel = modelField !== undefined;
    // A model the field takes (x-models: a moderation takes no chat model) that key B may not use.
    const takes = Array.isArray(modelField?.['x-models']) ? (modelField!['x-models'] as string[]) : undefined;
    const forbidden = world.models.A.filter((m) => !world.models.B.includes(m) && (!takes || takes.includes(m)));
    if (op.permission) {
      out['limited-key'] = fc.constant(mk('limited-key', op, 'B', `key B lacks the '${op.permission}' switch`, { status: 403, code: 'model_not_allowed' }, () => request(world, op, 'B', { path: ownPath(world, op, 'B'), body: body() })));
    } else if (hasModel && forbidden.length) {
      out['limited-key'] = fc.constantFrom(...forbidden).map((model) =>
        mk('limited-key', op, 'B', `key B with model ${model}, which it may not use`, world.baseOk.get(op.id) ? { status: 403, code: 'model_not_allowed', param: { field: 'model', exact: true } } : {}, () =>
          request(world, op, 'B', { path: ownPath(world, op, 'B'), body: Buffer.from(JSON.stringify({ ...baseBody(world, op, 'B'), model })) }),
        ),
      );
    }
  }
  return out;
}

/** The base body with an ignored field that brings it to `size` bytes. */
function padded(body: Buffer | null, size: number): Buffer {
  const base = body ? (JSON.parse(body.toString()) as Record<string, unknown>) : {};
  const overhead = Buffer.byteLength(JSON.stringify({ ...base, fz_pad: '' }));
  return Buffer.from(JSON.stringify({ ...base, fz_pad: 'p'.repeat(Math.max(0, size - overhead)) }));
}

export function requestCategories(world: World, op: Operation): Partial<Record<Category, fc.Arbitrary<Case>>> {
  return { ...queryCategories(world, op), ...contentTypeCategories(world, op), ...httpCategories(world, op) };
}
