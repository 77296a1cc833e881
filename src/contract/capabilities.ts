// GET /capabilities: the contract object of SPEC "What the service does" item 5, built
// from the same tables that validate requests.
import { ERROR_CATALOGUE } from '../errors.ts';
import { SVC_HEADER_NAME } from './fields.ts';
import { RESPONSE_TOOL_FIELDS } from './endpoints/responses-tools.ts';
import { UNSUPPORTED_FAMILIES, UNSUPPORTED_NOTES } from './unsupported.ts';
import type { EndpointContract, FieldTable } from './types.ts';

export const CONTRACT_VERSION = '1.1.0';
export const API_VERSION = '1.4.0';
/** The openai npm SDK the test suite drives the service with (kept equal to the lockfile by a test). */
export const TESTED_OPENAI_SDK = { package: 'openai', language: 'javascript', version: '6.49.0' } as const;

/** Tool types each endpoint accepts in `tools`; only offered endpoints are published. */
const TOOLS: Record<string, readonly string[]> = {
  createChatCompletion: ['function'],
  createResponse: [
    'function',
    'web_search',
    'web_search_preview',
    'web_search_2025_08_26',
    'web_search_preview_2025_03_11',
    'code_interpreter',
    'shell',
    'file_search',
    'image_generation',
    'mcp',
    'computer',
    'computer_use_preview',
    'apply_patch',
  ],
};

/** Member tables of tools, by endpoint: published as `tools[<type>].<member>` beside the body fields. */
const TOOL_FIELDS: Record<string, Readonly<Record<string, FieldTable>>> = {
  createResponse: RESPONSE_TOOL_FIELDS,
  Getinputtokencounts: RESPONSE_TOOL_FIELDS,
};

/** An endpoint's body fields with its tools' members, each member named `tools[<type>].<member>`. */
function bodyFields(c: EndpointContract): FieldTable {
  const members = Object.entries(TOOL_FIELDS[c.operationId] ?? {}).flatMap(([type, table]) => Object.entries(table).map(([name, rule]) => [`tools[${type}].${name}`, rule] as const));
  return { ...c.body?.fields, ...Object.fromEntries(members) };
}

export const HEADERS = {
  request: {
    Authorization: 'Bearer <API_KEY> (the messages-style surface also takes x-api-key)',
    'X-Client-Request-Id': 'optional; printable ASCII, up to 512 characters; recorded in the activity log; not an idempotency key',
  },
  response: {
    'X-Request-Id': 'on every response, errors included; opaque',
    'X-Service-Ignored-Parameters':
      'comma-separated names of request fields the reference API does not define for the endpoint, which were ignored; characters outside printable ASCII, "%" and "," are percent-encoded (UTF-8); past 2,000 characters the list ends with "...(+N more)"',
    // Answers whose body is not JSON carry their credits here, where a JSON answer has svc.
    [SVC_HEADER_NAME]: 'the credits the request used (its svc), on answers whose body is not JSON: POST /audio/speech (sent before the audio; a stream cut short is charged for what was read aloud) and the text, srt and vtt formats of transcriptions and translations',
    'x-ratelimit-limit-requests': 'requests per minute allowed for the key',
    'x-ratelimit-remaining-requests': 'requests left in the current minute',
    'x-ratelimit-reset-requests': 'time until the minute window resets, like 12s',
    'x-ratelimit-limit-tokens': 'only when the key has a token cap: the tightest cap',
    'x-ratelimit-remaining-tokens': 'tokens left under that cap',
    'x-ratelimit-reset-tokens': 'time until that cap resets',
  },
} as const;

const GENERAL_NOTES = [
  'A field the reference API defines and the service cannot honor is refused with 400 unsupported_parameter and the field in param; it is never silently dropped.',
  'A field the reference API does not define for an endpoint is ignored and named in the X-Service-Ignored-Parameters response header.',
  'JSON bodies must be UTF-8 and nested at most 100 levels deep; keys named __proto__, constructor.prototype, and query parameters named __proto__, constructor or prototype are refused (400 invalid_request).',
  'Multipart forms (file uploads) are checked like JSON bodies: required, refused and limited fields, unknown parts ignored and named; objects are sent as name[key] parts. A form holds at most 100 text parts of up to 64 KB and 10 files (a field that takes a folder, such as the `files` of skills, up to its own count, each part named by its path, its size limit counting all of them); a file over its limit is refused with 400 invalid_request naming the file field, and nothing of it is kept.',
  "A limited field accepts only the listed values; any other value is refused like an unsupported field. An explicit null means the field is not set.",
  'Every request spends the account\'s credits: a reserved estimate first, settled to the actual cost; the svc field (usage.svc on the final streaming usage chunk) reports the credits a response used.',
  'With tools, response_format or logprobs, or when the key\'s agent tools are off, the model answers directly; otherwise the assistant may use its own tools first.',
];

const key = (c: EndpointContract) => `${c.method} ${c.path}`;

function classify(fields: FieldTable | undefined) {
  const applied: string[] = [];
  const notes: Record<string, string> = {};
  const limitedFields: Record<string, readonly unknown[]> = {};
  const unsupported: Record<string, string> = {};
  const noEffect: string[] = [];
  for (const [name, rule] of Object.entries(fields ?? {})) {
    const needs = rule.category === 'applied' && rule.permission ? `needs the key's ${rule.permission} switch` : undefined;
    if (rule.note || needs) notes[name] = [rule.note, needs].filter(Boolean).join('; ');
    switch (rule.category) {
      case 'applied':
        applied.push(name);
        break;
      case 'limited':
        limitedFields[name] = rule.values;
        break;
      case 'refused':
        unsupported[name] = rule.note;
        break;
      case 'no_effect':
        noEffect.push(name);
        break;
    }
  }
  return { applied, notes, limitedFields, unsupported, noEffect };
}

export function buildCapabilities(offered: readonly EndpointContract[], baseUrl: string) {
  const fields: Record<string, string[]> = {};
  const fieldNotes: Record<string, Record<string, string>> = {};
  const limitedFields: Record<string, Record<string, readonly unknown[]>> = {};
  const unsupportedFields: Record<string, Record<string, string>> = {};
  const acceptedWithoutEffect: Record<string, string[]> = {};
  const tools: Record<string, readonly string[]> = {};
  const endpoints: { method: string; path: string; summary: string; permission: string | null; notes: readonly string[] }[] = [];

  for (const c of offered) {
    const k = key(c);
    endpoints.push({ method: c.method, path: c.path, summary: c.summary, permission: c.permission ?? null, notes: c.notes ?? [] });
    const body = classify(bodyFields(c));
    const query = classify(c.query);
    fields[k] = [...body.applied, ...query.applied.map((q) => `query.${q}`)];
    const notes = { ...body.notes, ...Object.fromEntries(Object.entries(query.notes).map(([n, v]) => [`query.${n}`, v])) };
    if (Object.keys(notes).length) fieldNotes[k] = notes;
    const limited = { ...body.limitedFields, ...Object.fromEntries(Object.entries(query.limitedFields).map(([n, v]) => [`query.${n}`, v])) };
    if (Object.keys(limited).length) limitedFields[k] = limited;
    const refused = { ...body.unsupported, ...Object.fromEntries(Object.entries(query.unsupported).map(([n, v]) => [`query.${n}`, v])) };
    if (Object.keys(refused).length) unsupportedFields[k] = refused;
    const noEffect = [...body.noEffect, ...query.noEffect.map((q) => `query.${q}`)];
    if (noEffect.length) acceptedWithoutEffect[k] = noEffect;
    const t = TOOLS[c.operationId];
    if (t) tools[k] = t;
  }

  return {
    object: 'capabilities' as const,
    contract: 'agent-api compatible subset of the reference API',
    version: CONTRACT_VERSION,
    api_version: API_VERSION,
    base_url: baseUrl,
    openapi: `${baseUrl}/openapi.json`,
    tested_openai_sdk: TESTED_OPENAI_SDK,
    endpoints,
    fields,
    field_notes: fieldNotes,
    limited_fields: limitedFields,
    unsupported_fields: unsupportedFields,
    accepted_without_effect: acceptedWithoutEffect,
    tools,
    notes: GENERAL_NOTES,
    errors: ERROR_CATALOGUE,
    headers: HEADERS,
    unsupported_endpoints: UNSUPPORTED_FAMILIES.map((family) => ({
      path: `/${family}`,
      code: 'unsupported_endpoint',
      ...(UNSUPPORTED_NOTES[family] ? { note: UNSUPPORTED_NOTES[family] } : {}),
    })),
  };
}
