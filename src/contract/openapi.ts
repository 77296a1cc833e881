// GET /openapi.json: an OpenAPI 3.1 document generated from the contract tables of a
// root's offered endpoints. Named schemas (zod `.meta({id})`) become components.
import { z } from 'zod';
import { API_VERSION } from './capabilities.ts';
import { V1, type Root } from './roots.ts';
import type { EndpointContract, FieldRule, FieldTable } from './types.ts';

type Json = Record<string, unknown>;

class SchemaCollector {
  readonly components: Record<string, Json>;

  constructor(errorSchema: Json) {
    this.components = { Error: errorSchema };
  }

  /** Converts a zod schema; its $defs move to components and refs are rewritten. */
  convert(schema: z.ZodType, io: 'input' | 'output', scope: string): Json {
    const js = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
    delete js.$schema;
    const defs = (js.$defs ?? {}) as Record<string, Json>;
    delete js.$defs;
    // Anonymous defs (cycles without an id) get generated names; scope them to the operation.
    const rename = (id: string) => (id.startsWith('__') ? `${scope}${id}` : id);
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (typeof node !== 'object' || node === null) return node;
      const out: Json = {};
      for (const [k, v] of Object.entries(node)) {
        out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/') ? `#/components/schemas/${rename(v.slice(8))}` : rewrite(v);
      }
      return out;
    };
    for (const [id, def] of Object.entries(defs)) this.components[rename(id)] ??= rewrite(def) as Json;
    return rewrite(js) as Json;
  }

  field(rule: FieldRule, io: 'input' | 'output', scope: string): Json | null {
    const description = rule.note ? { description: rule.note } : {};
    switch (rule.category) {
      case 'applied':
        // A model field lists the ids it takes (anything else is 404 model_not_found, not a schema failure).
        return { ...this.convert(rule.schema, io, scope), ...description, ...(rule.models ? { 'x-models': [...rule.models] } : {}) };
      case 'limited':
        return rule.each ? { type: 'array', items: { enum: [...rule.values] }, ...description } : { enum: [...rule.values], ...description };
      case 'no_effect':
        return { ...(rule.schema ? this.convert(rule.schema, io, scope) : {}), ...description, 'x-accepted-without-effect': true };
      case 'refused':
        return null;
    }
  }

  object(fields: FieldTable, required: readonly string[], scope: string, multipart = false): Json {
    const properties: Json = {};
    for (const [name, rule] of Object.entries(fields)) {
      if (name.includes('.')) continue;
      const schema = this.field(rule, 'input', scope);
      if (!schema) continue;
      // A file part is binary content, whatever its zod schema (an upload object) says.
      if (multipart && rule.category === 'applied' && rule.upload) {
        const binary = { type: 'string', contentMediaType: 'application/octet-stream' };
        const { many } = rule.upload;
        properties[name] = many
          ? { oneOf: [{ type: 'array', items: binary, maxItems: many.maxFiles }, binary], description: rule.note, 'x-max-bytes': rule.upload.maxBytes }
          : { ...binary, description: rule.note, 'x-max-bytes': rule.upload.larger?.maxBytes ?? rule.upload.maxBytes };
      } else properties[name] = schema;
    }
    return { type: 'object', properties, ...(required.length ? { required: [...required] } : {}) };
  }
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function pathParams(c: EndpointContract, schemas: SchemaCollector) {
  return [...c.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: c.params?.[name!] ? schemas.convert(c.params[name!]!, 'input', c.operationId) : { type: 'string' },
  }));
}

function queryParams(c: EndpointContract, schemas: SchemaCollector) {
  return Object.entries(c.query ?? {}).flatMap(([name, rule]) => {
    const schema = schemas.field(rule, 'input', c.operationId);
    if (!schema || name.includes('.')) return [];
    const isObject = schema.type === 'object';
    return [{ name, in: 'query', required: false, schema, ...(isObject ? { style: 'deepObject', explode: true } : {}) }];
  });
}

function operation(c: EndpointContract, schemas: SchemaCollector, isPublic: boolean): Json {
  const parameters = [...pathParams(c, schemas), ...queryParams(c, schemas)];
  const content: Json = {};
  if (c.response.alternate === 'binary') {
    content[c.response.contentType ?? 'application/octet-stream'] = { schema: { type: 'string', contentMediaType: c.response.contentType } };
  } else {
    content['application/json'] = { schema: schemas.convert(c.response.schema, 'output', c.operationId) };
    if (c.response.alternate === 'sse') {
      if (!c.response.stream) throw new Error(`${c.operationId}: a streaming response must say how its stream ends (response.stream)`);
      content['text/event-stream'] = { schema: { type: 'string', description: c.response.stream } };
    }
  }
  const op: Json = {
    operationId: c.operationId,
    summary: c.summary,
    tags: [c.family],
    ...(parameters.length ? { parameters } : {}),
    responses: {
      '200': { description: c.response.description ?? 'OK', content },
      '400': errorResponse('invalid_request or unsupported_parameter'),
      ...(isPublic ? {} : { '401': errorResponse('invalid_api_key'), '403': errorResponse('model_not_allowed'), '429': errorResponse('insufficient_quota') }),
      '404': errorResponse('model_not_found'),
      ...(c.billable ? { '502': errorResponse('upstream_error') } : {}),
    },
    ...(isPublic ? { security: [] } : {}),
    ...(c.permission ? { 'x-permission': c.permission } : {}),
    // Forwarded unchanged (the gateway): a client, and the bad-input gate, can tell its answers may be the upstream's.
    ...(c.passthrough ? { 'x-passthrough': true } : {}),
  };
  if (c.passthrough && c.method === 'POST') {
    op.requestBody = {
      required: true,
      description: 'Forwarded to the upstream byte for byte, in its own shape; the upstream judges it.',
      content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
    };
  }
  if (c.body) {
    const media = c.body.type === 'json' ? 'application/json' : 'multipart/form-data';
    op.requestBody = {
      required: (c.body.required?.length ?? 0) > 0,
      content: { [media]: { schema: schemas.object(c.body.fields, c.body.required ?? [], c.operationId, c.body.type === 'multipart') } },
    };
  }
  return op;
}

/** The OpenAPI document of a root's offered endpoints (its title, description and error shape). */
export function buildOpenApi(offered: readonly EndpointContract[], publicOps: ReadonlySet<string>, baseUrl: string, root: Root = V1) {
  const schemas = new SchemaCollector(root.errors.schema);
  const paths: Record<string, Json> = {};
  for (const c of offered) {
    (paths[c.path] ??= {})[c.method.toLowerCase()] = operation(c, schemas, publicOps.has(c.operationId));
  }
  return {
    openapi: '3.1.0',
    info: { title: root.title, version: root.version ?? API_VERSION, description: root.description },
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: schemas.components,
    },
  };
}
