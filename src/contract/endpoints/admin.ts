// The admin API's contract tables (the /admin/v1 root, contract/roots.ts): accounts,
// credits, keys and the activity log (the workspace's keys tab). Every field is applied;
// a field outside a table is refused (`strict`), as an operator's typo must not pass.
import { z } from 'zod';
import { isValidAllowEntry } from '../../keys/ip-allowlist.ts';
import { keyLimitSchema } from '../../keys/key-limits.ts';
import { PERMISSIONS } from '../../keys/permissions.ts';
import { MODEL_IDS } from '../models.ts';
import { creditsAmount } from '../../accounts/money.ts';
import { applied, storedText } from '../fields.ts';
import { defineEndpoint, type FieldTable } from '../types.ts';

/** Every field of a schema object, applied. */
const fieldsOf = (shape: Record<string, z.ZodType>): FieldTable => Object.fromEntries(Object.entries(shape).map(([name, schema]) => [name, applied(schema)]));

const accountFields = {
  // Names stand in for ids wherever an account is named, so they cannot look like one.
  name: storedText(200).pipe(z.string().min(1)).refine((n) => !n.startsWith('acct_'), 'must not start with acct_ (account ids do)'),
  credits: creditsAmount.min(0, 'must not be negative').default(0),
};

const creditsFields = {
  amount: creditsAmount.refine((n) => n !== 0, 'amount must not be 0'),
  reason: storedText(200).optional(),
  /** A debit that may take the available credits below zero (e.g. undoing a mistaken grant). */
  correction: z.boolean().optional(),
};

const permissionsSchema = z.strictObject(Object.fromEntries(PERMISSIONS.map((p) => [p, z.boolean().optional()])) as Record<(typeof PERMISSIONS)[number], z.ZodOptional<z.ZodBoolean>>);

const keyFields = {
  name: storedText(200).pipe(z.string().min(1)),
  permissions: permissionsSchema.optional(),
  /** The model ids the key may use (any of SPEC "Models"), on every endpoint that takes a model; null: all. */
  models: z.array(z.enum(MODEL_IDS)).min(1).max(MODEL_IDS.length * 4).nullable().optional(),
  ip_allowlist: z
    .array(z.string().refine(isValidAllowEntry, 'must be an IP address or CIDR range'))
    .min(1)
    .max(256)
    .nullable()
    .optional(),
  rpm: z.number().int().min(1).max(1_000_000_000).nullable().optional(),
  /** caps max_tokens of every request made with the key */
  max_output_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
  limits: z.array(keyLimitSchema).max(32).optional(),
  paused: z.boolean().optional(),
  /** Unix seconds */
  expires_at: z.number().int().positive().max(253_402_300_799, 'must be before the year 10000').nullable().optional(),
};

const activityFields = {
  key_id: z.string().optional(),
  account_id: z.string().optional(),
  client_request_id: z.string().optional(),
  request_id: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
};

const account = z
  .object({
    id: z.string(),
    object: z.literal('account'),
    name: z.string(),
    credits: z.number(),
    reserved_credits: z.number(),
    available_credits: z.number(),
    created_at: z.number().int(),
  })
  .meta({ id: 'AdminAccount' });
const apiKey = z
  .looseObject({
    id: z.string(),
    object: z.literal('api_key'),
    account_id: z.string(),
    name: z.string(),
    redacted_value: z.string(),
    paused: z.boolean(),
    revoked: z.boolean(),
    created_at: z.number().int(),
  })
  .meta({ id: 'AdminApiKey' });
const list = (item: z.ZodType) => z.looseObject({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() });
const idParam = { id: storedText(256).pipe(z.string().min(1)) };

const admin = { family: 'admin' } as const;
const strictJson = (fields: FieldTable, required: readonly string[] = []) => ({ type: 'json' as const, fields, required, strict: true });

export const adminEndpoints = [
  defineEndpoint({ ...admin, operationId: 'adminCreateAccount', method: 'POST', path: '/accounts', summary: 'Creates an account, with starting credits.', body: strictJson(fieldsOf(accountFields), ['name']), response: { schema: account } }),
  defineEndpoint({ ...admin, operationId: 'adminListAccounts', method: 'GET', path: '/accounts', summary: 'Lists the accounts.', response: { schema: list(account) } }),
  defineEndpoint({ ...admin, operationId: 'adminGetAccount', method: 'GET', path: '/accounts/{id}', summary: 'Retrieves an account by id or name.', params: idParam, response: { schema: account } }),
  defineEndpoint({
    ...admin,
    operationId: 'adminAddCredits',
    method: 'POST',
    path: '/accounts/{id}/credits',
    summary: 'Grants credits to an account (a negative amount debits it).',
    params: idParam,
    body: strictJson(fieldsOf(creditsFields), ['amount']),
    response: { schema: account },
  }),
  defineEndpoint({
    ...admin,
    operationId: 'adminCreateKey',
    method: 'POST',
    path: '/keys',
    summary: 'Creates an API key for an account (by id or name); its secret is in this answer only.',
    // `account_id`: the account's id or its name.
    body: strictJson(fieldsOf({ account_id: storedText(200).pipe(z.string().min(1)), ...keyFields }), ['account_id', 'name']),
    response: { schema: apiKey },
  }),
  defineEndpoint({ ...admin, operationId: 'adminListKeys', method: 'GET', path: '/keys', summary: 'Lists API keys, of one account or all.', query: fieldsOf({ account_id: z.string().optional() }), response: { schema: list(apiKey) } }),
  defineEndpoint({ ...admin, operationId: 'adminGetKey', method: 'GET', path: '/keys/{id}', summary: 'Retrieves an API key.', params: idParam, response: { schema: apiKey } }),
  defineEndpoint({
    ...admin,
    operationId: 'adminUpdateKey',
    method: 'PATCH',
    path: '/keys/{id}',
    summary: "Changes an API key's name, switches and limits.",
    params: idParam,
    body: strictJson(fieldsOf({ ...keyFields, name: keyFields.name.optional() })),
    response: { schema: apiKey },
  }),
  defineEndpoint({ ...admin, operationId: 'adminRevokeKey', method: 'DELETE', path: '/keys/{id}', summary: 'Revokes an API key.', params: idParam, response: { schema: apiKey } }),
  defineEndpoint({
    ...admin,
    operationId: 'adminListActivity',
    method: 'GET',
    path: '/activity',
    summary: 'The activity log: one row per request, newest first by default.',
    query: fieldsOf(activityFields),
    response: { schema: z.looseObject({ object: z.literal('list'), data: z.array(z.looseObject({ id: z.string(), object: z.literal('activity') })) }) },
  }),
  defineEndpoint({ ...admin, operationId: 'adminGetOpenApi', method: 'GET', path: '/openapi.json', summary: 'The OpenAPI 3.1 description of the admin API.', response: { schema: z.looseObject({ openapi: z.string() }) } }),
];

/** The admin endpoints by operationId. */
export const adminEndpoint = (operationId: string) => adminEndpoints.find((e) => e.operationId === operationId)!;
