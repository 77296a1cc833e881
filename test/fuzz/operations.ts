// The operations to fuzz, from each root's own OpenAPI document on the running server:
// /v1/openapi.json (with /v1/capabilities for the refused fields, which the OpenAPI
// document leaves out), /admin/v1/openapi.json, /api/messages/v1/openapi.json (its
// refused fields classified from its contract tables as /v1/capabilities does, since
// that root publishes no capabilities document) and /api/gateway/v1/openapi.json (its
// forwarded operations marked `x-passthrough`). An endpoint joins by being in its
// root's contract.
import type { JsonSchema } from './json-schema.ts';

/** The roots: the compatible API, the operator's API, the messages-style (vendor-compatible) API, the gateway. */
export type Surface = 'v1' | 'admin' | 'messages' | 'gateway';

export interface Operation {
  surface: Surface;
  /** operationId (the messages root's prefixed `messages:`: a report then says which root, and no id can clash with /v1's) */
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
  /** Forwarded unchanged to an upstream (the gateway's `x-passthrough`): the upstream judges the body, and its errors pass through. */
  passthrough: boolean;
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOp>>;
  components: { schemas: Record<string, JsonSchema> };
}
interface OpenApiOp {
  operationId: string;
  security?: unknown[];
  parameters?: { name: string; in: string; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  'x-permission'?: string;
  'x-passthrough'?: boolean;
}
export interface Capabilities {
  unsupported_fields: Record<string, Record<string, string>>;
  limited_fields: Record<string, Record<string, readonly unknown[]>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

const NO_CAPABILITIES: Capabilities = { unsupported_fields: {}, limited_fields: {} };

/** The operations of a root's OpenAPI document; `prefix` is where the root is mounted. */
export function rootOperations(doc: OpenApiDoc, surface: Surface, prefix: string, caps: Capabilities = NO_CAPABILITIES): Operation[] {
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
        surface,
        id: surface === 'messages' ? `messages:${op.operationId}` : op.operationId,
        method: M,
        path: `${prefix}${path}`,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
        body: media && bodySchema ? { media, schema: bodySchema, required: (bodySchema.required as string[] | undefined) ?? [] } : null,
        refused: refusedAll.filter((n) => !n.startsWith('query.')),
        refusedQuery: refusedAll.filter((n) => n.startsWith('query.')).map((n) => n.slice(6)),
        limited: Object.keys(caps.limited_fields[capKey] ?? {}).filter((n) => !n.includes('.') && !n.startsWith('query.')),
        // An operation with `security: []` is answered without a key or token.
        auth: Array.isArray(op.security) && op.security.length === 0 ? 'none' : surface === 'admin' ? 'admin' : 'key',
        permission: op['x-permission'] ?? null,
        passthrough: op['x-passthrough'] === true,
      });
    }
  }
  return ops;
}
