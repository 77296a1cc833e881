// The admin API at /admin/v1 (the workspace's keys tab): accounts, credits, keys and
// the activity log, authenticated by the admin token (AGENT_API_ADMIN_TOKEN or the stored
// one). Wherever an account id is taken, the account's name is taken too (`default`).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { viewAccount } from '../../accounts/accounts-service.ts';
import { CreditsRefused } from '../../accounts/money.ts';
import { queryActivity } from '../../activity/activity-query.ts';
import { paramPath, specificIssue } from '../../contract/check.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { RouteConfig } from '../../http/request-state.ts';
import { viewKey } from '../../keys/keys-service.ts';
import type { Services } from '../../services.ts';
import { activityQuery, addCreditsBody, createAccountBody, createKeyBody, listKeysQuery, updateKeyBody } from './schemas.ts';

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = specificIssue(result.error.issues[0]!);
  const param = paramPath(issue.path);
  throw invalidRequest(param ? `Invalid value for '${param}': ${issue.message}` : issue.message, param || null);
}

/** A refused grant or debit is the caller's 400, naming the field. */
async function refusedAs<T>(param: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof CreditsRefused) throw invalidRequest(err.message, param);
    throw err;
  }
}

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

export function adminRoutes(app: FastifyInstance, services: Services, prefix = '/admin/v1'): void {
  const { accounts, keys, activity, store } = services;
  const config = (endpoint: string): { agent: RouteConfig } => ({ agent: { auth: 'admin', endpoint: prefix + endpoint } });
  // A filter by an unknown account stays a filter (an empty list), not an error.
  const accountIdOf = async (idOrName: string) => (await accounts.find(idOrName))?.id ?? idOrName;

  app.post(`${prefix}/accounts`, { config: config('/accounts') }, async (request, reply) => {
    const body = parse(createAccountBody, request.body);
    if (await accounts.getByName(body.name)) throw invalidRequest(`An account named '${body.name}' already exists.`, 'name');
    const account = await refusedAs('credits', () => accounts.create(body.name, body.credits));
    return reply.code(201).send(viewAccount(account));
  });

  app.get(`${prefix}/accounts`, { config: config('/accounts') }, async () => {
    const rows = await accounts.list();
    return { object: 'list', data: rows.map(viewAccount), has_more: false };
  });

  app.get(`${prefix}/accounts/:id`, { config: config('/accounts/{id}') }, async (request) => {
    const account = await accounts.find(idOf(request));
    if (!account) throw notFound(`No account with id or name '${idOf(request)}'.`);
    return viewAccount(account);
  });

  app.post(`${prefix}/accounts/:id/credits`, { config: config('/accounts/{id}/credits') }, async (request) => {
    const body = parse(addCreditsBody, request.body);
    const found = await accounts.find(idOf(request));
    const account = found && (await refusedAs('amount', () => accounts.addCredits(found.id, body.amount, body.reason, { correction: body.correction === true })));
    if (!account) throw notFound(`No account with id or name '${idOf(request)}'.`);
    return viewAccount(account);
  });

  app.post(`${prefix}/keys`, { config: config('/keys') }, async (request, reply) => {
    const body = parse(createKeyBody, request.body);
    const account = await accounts.find(body.account_id);
    if (!account) throw notFound(`No account with id or name '${body.account_id}'.`, 'account_id');
    if (body.expires_at && body.expires_at * 1000 <= Date.now()) throw invalidRequest('expires_at must be in the future.', 'expires_at');
    const { record, secret } = await keys.create({ ...body, account_id: account.id });
    // The only time the secret is shown.
    return reply.code(201).send({ ...viewKey(record), key: secret });
  });

  app.get(`${prefix}/keys`, { config: config('/keys') }, async (request) => {
    const query = parse(listKeysQuery, request.query);
    const accountId = query.account_id && (await accountIdOf(query.account_id));
    const list = await keys.list({ ...(accountId ? { accountId } : {}) });
    return { object: 'list', data: list.map(viewKey), has_more: false };
  });

  app.get(`${prefix}/keys/:id`, { config: config('/keys/{id}') }, async (request) => {
    const key = await keys.get(idOf(request));
    if (!key) throw notFound(`No API key with id '${idOf(request)}'.`);
    return viewKey(key);
  });

  app.patch(`${prefix}/keys/:id`, { config: config('/keys/{id}') }, async (request) => {
    const body = parse(updateKeyBody, request.body);
    const key = await keys.update(idOf(request), body);
    if (!key) throw notFound(`No API key with id '${idOf(request)}'.`);
    return viewKey(key);
  });

  app.delete(`${prefix}/keys/:id`, { config: config('/keys/{id}') }, async (request) => {
    const key = await keys.revoke(idOf(request));
    if (!key) throw notFound(`No API key with id '${idOf(request)}'.`);
    return viewKey(key);
  });

  app.get(`${prefix}/activity`, { config: config('/activity') }, async (request) => {
    const query = parse(activityQuery, request.query);
    await activity.flush();
    return queryActivity(store.db, { ...query, account_id: query.account_id && (await accountIdOf(query.account_id)) });
  });
}
