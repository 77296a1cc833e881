// Step 4: the contract. Classify and validate body and query fields against the
// endpoint's table, name the ignored ones, and check the model against the key.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { compileTable, groupQuery, type CompiledTable } from '../contract/check.ts';
import { CHAT_MODELS } from '../contract/models.ts';
import type { EndpointContract } from '../contract/types.ts';
import { invalidRequest, modelNotAllowed } from '../errors.ts';
import type { RequestState } from './request-state.ts';

const compiled = new WeakMap<EndpointContract, { body?: CompiledTable; query?: CompiledTable }>();

export function compileContract(contract: EndpointContract) {
  let c = compiled.get(contract);
  if (!c) {
    c = {
      ...(contract.body?.type === 'json' ? { body: compileTable(contract.body.fields, contract.body.required) } : {}),
      ...(contract.query ? { query: compileTable(contract.query) } : {}),
    };
    compiled.set(contract, c);
  }
  return c;
}

const chatModels: readonly string[] = CHAT_MODELS;

export async function contractStep(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const contract = request.routeOptions.config.agent?.contract;
  if (!contract) return;
  const tables = compileContract(contract);
  const state = request.state;
  if (tables.body) {
    const body = request.body ?? {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalidRequest('The request body must be a JSON object.');
    }
    // Recorded before checking, so a refused request's activity row still says who and what.
    noteCaller(state, body as Record<string, unknown>);
    for (const [name, permission] of tables.body.permissions) {
      const value = (body as Record<string, unknown>)[name];
      if (value !== undefined && value !== null && state.key && !state.key.permissions[permission]) {
        throw modelNotAllowed(`This API key does not have the '${permission}' permission, which '${name}' needs.`, name);
      }
    }
    const checked = tables.body.check(body as Record<string, unknown>);
    state.body = checked.value;
    state.ignored.push(...checked.ignored);
  }
  if (tables.query) {
    const checked = tables.query.check(groupQuery(request.query as Record<string, unknown>));
    state.query = checked.value;
    state.ignored.push(...checked.ignored);
  }
  if (state.ignored.length > 0) reply.header('x-service-ignored-parameters', ignoredHeader(state.ignored));

  const model = state.body.model;
  const key = state.key;
  if (typeof model === 'string' && key?.models && chatModels.includes(model) && !key.models.includes(model)) {
    throw modelNotAllowed(`This API key is not allowed to use the model '${model}'.`, 'model');
  }
}

/** Past this, the header ends with `...(+N more)`: clients refuse very long header lines. */
const IGNORED_HEADER_MAX = 2_000;

/**
 * X-Service-Ignored-Parameters: the names, comma-separated. A header value is Latin-1
 * at most, and a name may hold anything JSON allows, so every character outside
 * printable ASCII, and `%` and `,`, is percent-encoded as UTF-8 (`ключ` → `%D0%BA...`).
 */
export function ignoredHeader(names: readonly string[]): string {
  let out = '';
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!.replace(/[^\x20-\x24\x26-\x2b\x2d-\x7e]+/g, (run) => encodeURIComponent(wellFormed(run)).replace(/,/g, '%2C'));
    const next = out === '' ? name : `${out}, ${name}`;
    if (next.length > IGNORED_HEADER_MAX) return `${out === '' ? '' : `${out}, `}...(+${names.length - i} more)`;
    out = next;
  }
  return out;
}

/** Lone surrogates (JSON allows "\ud800") as U+FFFD: encodeURIComponent throws on them. */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

function noteCaller(state: RequestState, body: Record<string, unknown>): void {
  const { model, user, safety_identifier } = body;
  // Unchecked yet: cut to size and without NULs, which PostgreSQL's text columns refuse.
  const clean = (s: string, max: number) => s.slice(0, max).replaceAll('\u0000', '');
  if (typeof model === 'string') state.model = clean(model, 200);
  if (typeof user === 'string') state.user = clean(user, 256);
  if (typeof safety_identifier === 'string') state.safetyIdentifier = clean(safety_identifier, 256);
}
