// Step 5: the contract. Classify and validate body, query and path parameters against
// the endpoint's tables, name the ignored fields, check field switches and the model
// against the key. The tables are compiled when the endpoint is registered
// (compileContract), so a bad table stops start-up.
import { compileTable, groupQuery, paramPath, specificIssue, type Checked, type CompiledTable } from '../contract/check.ts';
import { FormBody } from '../contract/form.ts';
import type { EndpointContract } from '../contract/types.ts';
import { ApiError, invalidRequest, modelNotAllowed } from '../errors.ts';
import type { Call } from './call.ts';

export interface CompiledContract {
  body?: CompiledTable;
  query?: CompiledTable;
}

const compiled = new WeakMap<EndpointContract, CompiledContract>();

/** Compiles an endpoint's tables once (throws on a table that cannot work: start-up stops). */
export function compileContract(contract: EndpointContract): CompiledContract {
  let c = compiled.get(contract);
  if (!c) {
    try {
      c = {
        ...(contract.body ? { body: compileTable(contract.body.fields, contract.body.required, contract.body.strict === true) } : {}),
        ...(contract.query ? { query: compileTable(contract.query) } : {}),
      };
    } catch (err) {
      throw new Error(`the contract table of ${contract.method} ${contract.path} is invalid: ${(err as Error).message}`);
    }
    compiled.set(contract, c);
  }
  return c;
}

export interface CallInput {
  /** The parsed JSON body (JSON endpoints), or the FormBody of a multipart endpoint. */
  body?: unknown;
  /** The flat query string (`metadata[k]=v` is regrouped here). */
  query?: Record<string, unknown>;
  /** Path parameters by name. */
  params?: Record<string, string>;
}

/** Checks a call's input against its route's contract; the checked values land on the call. */
export function checkCall(call: Call, input: CallInput): void {
  const contract = call.route?.contract;
  if (!contract) return;
  const tables = compileContract(contract);
  if (contract.params && input.params) call.params = checkParams(contract, input.params);
  // A raw root's body is forwarded as it came: the handler has its bytes (contract/roots.ts).
  if (tables.body && call.route?.root?.bodies !== 'raw') {
    // A large JSON body was checked on a worker thread (json/parse-pool.ts): what it found is applied in the same order.
    const pre = input.body instanceof CheckedBody ? input.body : null;
    const body = pre ? pre.caller : contract.body?.type === 'multipart' ? formFields(input.body, contract.body.alsoJson === true) : (input.body ?? {});
    if (pre?.notObject || typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalidRequest('The request body must be a JSON object.');
    }
    // Recorded before checking, so a refused request's activity row still says who and what.
    noteCaller(call, body as Record<string, unknown>);
    for (const [name, permission, when] of tables.body.permissions) {
      const value = (body as Record<string, unknown>)[name];
      const present = pre ? pre.present.includes(name) : value !== undefined && value !== null && (!when || when(value));
      if (present && call.key && !call.key.permissions[permission]) {
        throw modelNotAllowed(`This API key does not have the '${permission}' permission, which '${name}' needs.`, name);
      }
    }
    const checked = pre ? pre.checked() : tables.body.check(body as Record<string, unknown>);
    call.body = checked.value;
    call.ignored.push(...checked.ignored);
  }
  if (tables.query) {
    const checked = tables.query.check(groupQuery(input.query ?? {}));
    call.query = checked.value;
    call.ignored.push(...checked.ignored);
  }
  if (call.ignored.length > 0) call.headers['x-service-ignored-parameters'] = ignoredHeader(call.ignored);

  // Model vs. key: every field that names a model (chat, completions, responses, embeddings,
  // input_tokens, compact; batch lines come through here too), not only the chat models.
  const allowed = call.key?.models;
  if (allowed && tables.body) {
    for (const name of tables.body.modelFields) {
      const model = call.body[name];
      if (typeof model === 'string' && !allowed.includes(model)) {
        throw modelNotAllowed(`This API key is not allowed to use the model '${model}'.`, name);
      }
    }
  }
}

/** What checking a JSON body found apart from the key: made where the check ran (a worker thread), applied by checkCall. */
export interface BodyFindings {
  /** The body is not a JSON object. */
  notObject: boolean;
  /** The caller's `model`, `user` and `safety_identifier` when they are strings, cut to what the activity row keeps. */
  caller: Record<string, string>;
  /** The fields that need a key permission, present and not null. */
  present: string[];
  /** The table's verdict. */
  result: { ok: true; checked: Checked } | { ok: false; error: ApiError };
}

/**
 * A JSON body checked against its endpoint's tables before checkCall saw it (a large
 * body, on a worker thread: json/parse-pool.ts). checkCall applies the findings in
 * the order it checks a body itself, so the answers are the same.
 */
export class CheckedBody {
  constructor(private readonly findings: BodyFindings) {}
  get notObject(): boolean {
    return this.findings.notObject;
  }
  get caller(): Record<string, string> {
    return this.findings.caller;
  }
  get present(): readonly string[] {
    return this.findings.present;
  }
  checked(): Checked {
    const r = this.findings.result;
    if (!r.ok) throw r.error;
    return r.checked;
  }
}

/** checkCall's body checks that do not depend on the key, for a JSON endpoint (run off the event loop for a large body). */
export function examineJsonBody(contract: EndpointContract, body: unknown): BodyFindings {
  const table = compileContract(contract).body;
  if (!table || contract.body?.type !== 'json') throw new Error(`${contract.operationId} takes no JSON body`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { notObject: true, caller: {}, present: [], result: { ok: true, checked: { value: {}, ignored: [] } } };
  const fields = body as Record<string, unknown>;
  const caller: Record<string, string> = {};
  for (const name of ['model', 'user', 'safety_identifier']) {
    const value = fields[name];
    if (typeof value === 'string') caller[name] = value.slice(0, CALLER_FIELD_MAX);
  }
  const present = table.permissions.filter(([name, , when]) => fields[name] !== undefined && fields[name] !== null && (!when || when(fields[name]))).map(([name]) => name);
  try {
    return { notObject: false, caller, present, result: { ok: true, checked: table.check(fields) } };
  } catch (err) {
    if (err instanceof ApiError) return { notObject: false, caller, present, result: { ok: false, error: err } };
    throw err;
  }
}

/**
 * A multipart endpoint's fields, `name[key]` parts regrouped; any other body is refused,
 * except a JSON object where the endpoint also takes one (checked like any JSON body: a
 * file field there fails its schema).
 */
function formFields(body: unknown, alsoJson: boolean): Record<string, unknown> {
  if (alsoJson && typeof body === 'object' && body !== null && !(body instanceof FormBody)) return body as Record<string, unknown>;
  if (!(body instanceof FormBody)) {
    throw invalidRequest('This endpoint takes a multipart/form-data body (Content-Type: multipart/form-data; boundary=...).');
  }
  return groupQuery(body.values, 'form field');
}

/** Path parameters under the table's schemas: a value outside one is a 400 naming it. */
function checkParams(contract: EndpointContract, params: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(contract.params ?? {})) {
    const parsed = schema.safeParse(params[name]);
    if (!parsed.success) {
      const issue = specificIssue(parsed.error.issues[0]!);
      throw invalidRequest(`Invalid value for path parameter '${name}': ${issue.message}`, paramPath([name, ...issue.path]));
    }
    out[name] = String(parsed.data);
  }
  return out;
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

/** The longest caller field the activity row keeps (noteCaller). */
const CALLER_FIELD_MAX = 256;

/** Unchecked yet: cut to size and without NULs, which PostgreSQL's text columns refuse. */
const clean = (s: string, max: number) => s.slice(0, max).replaceAll('\u0000', '');

function noteCaller(state: Call, body: Record<string, unknown>): void {
  const { model, user, safety_identifier } = body;
  if (typeof model === 'string') state.model = clean(model, 200);
  if (typeof user === 'string') state.user = clean(user, CALLER_FIELD_MAX);
  if (typeof safety_identifier === 'string') state.safetyIdentifier = clean(safety_identifier, CALLER_FIELD_MAX);
}
