// The operations to fuzz. The compatible API's come from the running server's own
// /v1/openapi.json (and /v1/capabilities for the refused fields, which the OpenAPI
// document leaves out), so an endpoint joins by being in the contract. The admin API's
// routes are recorded by running its registration against a stand-in app, and their
// bodies come from the zod schemas beside them.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminRoutes } from '../../src/api/admin/routes.ts';
import * as adminSchemas from '../../src/api/admin/schemas.ts';
import type { Services } from '../../src/services.ts';
import type { JsonSchema } from './json-schema.ts';

export interface Operation {
  surface: 'v1' | 'admin';
  /** operationId, or `admin METHOD path` */
  id: string;
  method: string;
  /** full path template, e.g. /v1/chat/completions/{completion_id} */
  path: string;
  pathParams: string[];
  query: Record<string, JsonSchema>;
  body: { media: 'json' | 'multipart'; schema: JsonSchema; required: string[] } | null;
  /** Body fields the reference API defines and the service refuses (400 unsupported_parameter). */
  refused: string[];
  /** Query fields refused the same way. */
  refusedQuery: string[];
  /** Body fields that accept only listed values (400 unsupported_parameter otherwise). */
  limited: string[];
  auth: 'key' | 'admin' | 'none';
  permission: string | null;
}

interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOp>>;
  components: { schemas: Record<string, JsonSchema> };
}
interface OpenApiOp {
  operationId: string;
  security?: unknown[];
  parameters?: { name: string; in: string; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  'x-permission'?: string;
}
interface Capabilities {
  unsupported_fields: Record<string, Record<string, string>>;
  limited_fields: Record<string, Record<string, unknown[]>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function v1Operations(doc: OpenApiDoc, caps: Capabilities): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const M = method.toUpperCase();
      const params = op.parameters ?? [];
      const content = op.requestBody?.content ?? {};
      const media = content['application/json'] ? 'json' : content['multipart/form-data'] ? 'multipart' : null;
      const bodySchema = media ? content[media === 'json' ? 'application/json' : 'multipart/form-data']!.schema : null;
      const capKey = `${M} ${path}`;
      const refusedAll = Object.keys(caps.unsupported_fields[capKey] ?? {}).filter((n) => !n.includes('.'));
      ops.push({
        surface: 'v1',
        id: op.operationId,
        method: M,
        path: `/v1${path}`,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
        body: media && bodySchema ? { media, schema: bodySchema, required: (bodySchema.required as string[] | undefined) ?? [] } : null,
        refused: refusedAll.filter((n) => !n.startsWith('query.')),
        refusedQuery: refusedAll.filter((n) => n.startsWith('query.')).map((n) => n.slice(6)),
        limited: Object.keys(caps.limited_fields[capKey] ?? {}).filter((n) => !n.includes('.') && !n.startsWith('query.')),
        // An operation with `security: []` is answered without a key.
        auth: Array.isArray(op.security) && op.security.length === 0 ? 'none' : 'key',
        permission: op['x-permission'] ?? null,
      });
    }
  }
  return ops;
}

/**
 * Body and query schemas of the admin routes, by `METHOD path`. A new admin route is
 * fuzzed without being listed here (every category that needs no schema); list its
 * schema here so the schema-driven categories reach it too.
 */
const ADMIN_SCHEMAS: Record<string, { body?: z.ZodType; query?: z.ZodType }> = {
  'POST /admin/v1/accounts': { body: adminSchemas.createAccountBody },
  'POST /admin/v1/accounts/{id}/credits': { body: adminSchemas.addCreditsBody },
  'POST /admin/v1/keys': { body: adminSchemas.createKeyBody },
  'GET /admin/v1/keys': { query: adminSchemas.listKeysQuery },
  'PATCH /admin/v1/keys/{id}': { body: adminSchemas.updateKeyBody },
  'GET /admin/v1/activity': { query: adminSchemas.activityQuery },
};

const toJsonSchema = (schema: z.ZodType): JsonSchema => {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete js.$schema;
  return js;
};

/** The admin routes as registered: adminRoutes() runs against an app that only records. */
export function adminOperations(): { ops: Operation[]; unlisted: string[] } {
  const routes: { method: string; url: string }[] = [];
  const recorder = new Proxy(
    {},
    {
      get: (_t, prop: string) => (url: string) => {
        routes.push({ method: prop.toUpperCase(), url });
      },
    },
  ) as unknown as FastifyInstance;
  adminRoutes(recorder, {} as Services);
  const unlisted: string[] = [];
  const ops = routes.map(({ method, url }): Operation => {
    const path = url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const id = `${method} ${path}`;
    const schemas = ADMIN_SCHEMAS[id];
    if (!schemas && method !== 'GET' && method !== 'DELETE') unlisted.push(id);
    const body = schemas?.body ? toJsonSchema(schemas.body) : null;
    const query = schemas?.query ? toJsonSchema(schemas.query) : null;
    return {
      surface: 'admin',
      id: `admin ${id}`,
      method,
      path,
      pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
      query: (query?.properties as Record<string, JsonSchema> | undefined) ?? {},
      body: body ? { media: 'json', schema: body, required: (body.required as string[] | undefined) ?? [] } : method === 'POST' || method === 'PATCH' ? { media: 'json', schema: {}, required: [] } : null,
      refused: [],
      refusedQuery: [],
      limited: [],
      auth: 'admin',
      permission: null,
    };
  });
  return { ops, unlisted };
}
