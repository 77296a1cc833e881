// The admin API at /admin/v1 (the workspace's keys tab): accounts, credits, keys and
// the activity log, authenticated by the admin token (AGENT_API_ADMIN_TOKEN or the stored
// one). Its endpoints are contract tables (contract/endpoints/admin.ts) on the admin
// root, so the pipeline checks them, /admin/v1/openapi.json describes them and the fuzz
// gate reaches them as it does /v1. Wherever an account id is taken, the account's name
// is taken too (`default`).
import { viewAccount } from '../../accounts/accounts-service.ts';
import { CreditsRefused } from '../../accounts/money.ts';
import { queryActivity } from '../../activity/activity-query.ts';
import { adminEndpoint } from '../../contract/endpoints/admin.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { viewKey } from '../../keys/keys-service.ts';

/** A refused grant or debit is the caller's 400, naming the field. */
async function refusedAs<T>(param: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof CreditsRefused) throw invalidRequest(err.message, param);
    throw err;
  }
}

type Body = Record<string, any>;

export function adminRoutes(router: Router): void {
  const { accounts, keys, activity, store } = router.services;
  // A filter by an unknown account stays a filter (an empty list), not an error.
  const accountIdOf = async (idOrName: string) => (await accounts.find(idOrName))?.id ?? idOrName;
  const noAccount = (id: string, param?: string) => notFound(`No account with id or name '${id}'.`, param ?? null);
  const noKey = (id: string) => notFound(`No API key with id '${id}'.`);

  router.endpoint(adminEndpoint('adminCreateAccount'), async ({ body, reply }) => {
    const { name, credits } = body as Body;
    if (await accounts.getByName(name)) throw invalidRequest(`An account named '${name}' already exists.`, 'name');
    const account = await refusedAs('credits', () => accounts.create(name, credits));
    return reply.code(201).send(viewAccount(account));
  });

  router.endpoint(adminEndpoint('adminListAccounts'), async () => {
    const rows = await accounts.list();
    return { object: 'list', data: rows.map(viewAccount), has_more: false };
  });

  router.endpoint(adminEndpoint('adminGetAccount'), async ({ params }) => {
    const account = await accounts.find(params.id!);
    if (!account) throw noAccount(params.id!);
    return viewAccount(account);
  });

  router.endpoint(adminEndpoint('adminAddCredits'), async ({ params, body }) => {
    const { amount, reason, correction } = body as Body;
    const found = await accounts.find(params.id!);
    const account = found && (await refusedAs('amount', () => accounts.addCredits(found.id, amount, reason, { correction: correction === true })));
    if (!account) throw noAccount(params.id!);
    return viewAccount(account);
  });

  router.endpoint(adminEndpoint('adminCreateKey'), async ({ body, reply }) => {
    const fields = body as Body;
    const account = await accounts.find(fields.account_id);
    if (!account) throw noAccount(fields.account_id, 'account_id');
    if (fields.expires_at && fields.expires_at * 1000 <= Date.now()) throw invalidRequest('expires_at must be in the future.', 'expires_at');
    const { record, secret } = await keys.create({ ...(fields as Parameters<typeof keys.create>[0]), account_id: account.id });
    // The only time the secret is shown.
    return reply.code(201).send({ ...viewKey(record), key: secret });
  });

  router.endpoint(adminEndpoint('adminListKeys'), async ({ query }) => {
    const accountId = (query as Body).account_id && (await accountIdOf((query as Body).account_id));
    const list = await keys.list({ ...(accountId ? { accountId } : {}) });
    return { object: 'list', data: list.map(viewKey), has_more: false };
  });

  router.endpoint(adminEndpoint('adminGetKey'), async ({ params }) => {
    const key = await keys.get(params.id!);
    if (!key) throw noKey(params.id!);
    return viewKey(key);
  });

  router.endpoint(adminEndpoint('adminUpdateKey'), async ({ params, body }) => {
    const key = await keys.update(params.id!, body as Parameters<typeof keys.update>[1]);
    if (!key) throw noKey(params.id!);
    return viewKey(key);
  });

  router.endpoint(adminEndpoint('adminRevokeKey'), async ({ params }) => {
    const key = await keys.revoke(params.id!);
    if (!key) throw noKey(params.id!);
    return viewKey(key);
  });

  router.endpoint(adminEndpoint('adminListActivity'), async ({ query }) => {
    const q = query as Body;
    await activity.flush();
    return queryActivity(store.db, { ...(q as Parameters<typeof queryActivity>[1]), account_id: q.account_id && (await accountIdOf(q.account_id)) });
  });
}
