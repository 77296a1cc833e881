// Roots as data (DESIGN "Roots"): each surface the process serves is a prefix with its
// endpoints' contract tables, its error shape (the body, and the status each catalogue
// entry takes there), its published documents, and whether its bodies are parsed. The
// router registers a root's endpoints, the error handler renders by the root a request
// is under, and each root publishes its own OpenAPI document: a new surface is a root
// declared here plus its handlers, not a second pipeline.
import type { ApiError } from '../errors.ts';
import { adminEndpoints } from './endpoints/admin.ts';
import { ALL_ENDPOINTS } from './registry.ts';
import type { EndpointContract } from './types.ts';

type Json = Record<string, unknown>;

export interface ErrorShape {
  /** The status an error of the catalogue answers with under this root. */
  status(error: ApiError): number;
  /** The JSON body of an error answer. */
  body(error: ApiError): unknown;
  /** The body's JSON Schema, for the root's OpenAPI document. */
  readonly schema: Json;
}

export interface Root {
  /** Short name, for logs and the OpenAPI document. */
  readonly id: string;
  /** Where it is mounted, e.g. `/v1`. */
  readonly prefix: string;
  readonly title: string;
  readonly description: string;
  /** How its endpoints authenticate unless one says otherwise: an API key or the admin token. */
  readonly auth: 'key' | 'admin';
  /** Its endpoints' contract tables, offered or not yet (a handler registers what is offered). */
  readonly endpoints: readonly EndpointContract[];
  readonly errors: ErrorShape;
  /** `parsed`: JSON and multipart bodies go through the contract; `raw`: bodies are forwarded unparsed. */
  readonly bodies: 'parsed' | 'raw';
  /** Its documents (/openapi.json, and /capabilities where it has that contract) are answered without authentication. */
  readonly publicDocuments: boolean;
}

/** The reference API's error object: {error: {message, type, param, code}}. */
export const referenceErrors: ErrorShape = {
  status: (error) => error.status,
  body: (error) => error.toBody(),
  schema: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: 'string' } },
      },
    },
  },
};

/** The compatible API. */
export const V1: Root = {
  id: 'v1',
  prefix: '/v1',
  title: 'agent-api',
  description: 'A self-hosted subset of the reference AI API. Fields outside the contract are refused or ignored as GET /capabilities describes.',
  auth: 'key',
  endpoints: ALL_ENDPOINTS,
  errors: referenceErrors,
  bodies: 'parsed',
  publicDocuments: true,
};

/** The operator's API: accounts, credits, keys and the activity log, under the admin token. */
export const ADMIN: Root = {
  id: 'admin',
  prefix: '/admin/v1',
  title: 'agent-api admin',
  description: "The operator's API: accounts and their credits, API keys and the activity log. Authenticated by the admin token. Unknown fields are refused.",
  auth: 'admin',
  endpoints: adminEndpoints,
  errors: referenceErrors,
  bodies: 'parsed',
  publicDocuments: false,
};

/** The root a URL is under among `roots` (longest prefix first), the compatible API's for one under none. */
export function rootOf(url: string, roots: readonly Root[]): Root {
  for (const root of roots) if (url === root.prefix || url.startsWith(`${root.prefix}/`) || url.startsWith(`${root.prefix}?`)) return root;
  return V1;
}
