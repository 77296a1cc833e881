// `npx agent-api ...`: the admin operations on the configured database (DATABASE_URL or
// SQLite under DATA_DIR), for operators without the HTTP admin API at hand.
import { parseArgs } from 'node:util';
import { AccountsService, viewAccount } from './accounts/accounts-service.ts';
import { loadConfig } from './config.ts';
import { keyLimitSchema, type KeyLimit } from './keys/key-limits.ts';
import { KeysService, viewKey } from './keys/keys-service.ts';
import { PERMISSIONS, type Permission } from './keys/permissions.ts';
import { openStore } from './store/db.ts';

const HELP = `Usage: agent-api <command> [options]

  serve                                   start the server (same as npm start)
  accounts create --name N [--credits C]  create an account
  accounts list                           list accounts
  credits add --account ID --amount C     add (or with a negative amount remove) credits
  keys create --account ID --name N       create a key; prints its secret once
      [--permissions embeddings,files,...|all] [--models agent,agent-think]
      [--ip 10.0.0.0/8,127.0.0.1] [--rpm N] [--max-output-tokens N]
      [--limit metric:period:max ...]
      [--expires-at UNIX_SECONDS] [--paused]
  keys list [--account ID]                list keys (never their secrets)
  keys pause|unpause|revoke ID            change a key

Configuration comes from the environment, as for the server (docs/configuration.md).`;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const list = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined);

function parseLimit(text: string): KeyLimit {
  const [metric, period, max] = text.split(':');
  const parsed = keyLimitSchema.safeParse({ metric, period, max: Number(max) });
  if (!parsed.success) fail(`invalid --limit '${text}': use metric:period:max, e.g. requests:day:1000`);
  return parsed.data;
}

function parsePermissions(v: string | undefined): Partial<Record<Permission, boolean>> | undefined {
  const names = list(v);
  if (!names) return undefined;
  if (names.includes('all')) return Object.fromEntries(PERMISSIONS.map((p) => [p, true]));
  for (const n of names) if (!(PERMISSIONS as readonly string[]).includes(n)) fail(`unknown permission '${n}'; known: ${PERMISSIONS.join(', ')}`);
  return Object.fromEntries(names.map((n) => [n, true]));
}

async function main(argv: string[]): Promise<void> {
  const [group, action, ...rest] = argv;
  if (!group || group === 'help' || group === '--help') {
    console.log(HELP);
    return;
  }
  if (group === 'serve') {
    await import('./main.ts');
    return;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      credits: { type: 'string' },
      account: { type: 'string' },
      amount: { type: 'string' },
      permissions: { type: 'string' },
      models: { type: 'string' },
      ip: { type: 'string' },
      rpm: { type: 'string' },
      'max-output-tokens': { type: 'string' },
      limit: { type: 'string', multiple: true },
      'expires-at': { type: 'string' },
      paused: { type: 'boolean' },
    },
  });
  const config = loadConfig();
  const store = await openStore(config.database);
  const accounts = new AccountsService(store.db);
  const keys = new KeysService(store.db, 0);
  const print = (v: unknown) => console.log(JSON.stringify(v, null, 2));
  const number = (v: string | undefined, flag: string) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n)) fail(`--${flag} must be a number`);
    return n;
  };
  const positiveInteger = (v: string, flag: string) => {
    const n = number(v, flag);
    if (!Number.isInteger(n) || n < 1) fail(`--${flag} must be a whole number of at least 1`);
    return n;
  };
  try {
    switch (`${group} ${action}`) {
      case 'accounts create': {
        if (!values.name) fail('--name is required');
        if (await accounts.getByName(values.name)) fail(`an account named '${values.name}' already exists`);
        print(viewAccount(await accounts.create(values.name, values.credits ? number(values.credits, 'credits') : 0)));
        break;
      }
      case 'accounts list':
        print((await accounts.list()).map(viewAccount));
        break;
      case 'credits add': {
        const account = await accounts.addCredits(values.account ?? fail('--account is required'), number(values.amount, 'amount'), 'cli grant');
        print(account ? viewAccount(account) : fail('no such account'));
        break;
      }
      case 'keys create': {
        const accountId = values.account ?? fail('--account is required');
        if (!(await accounts.get(accountId))) fail('no such account');
        const models = list(values.models);
        for (const m of models ?? []) if (m !== 'agent' && m !== 'agent-think') fail(`unknown model '${m}'`);
        const { record, secret } = await keys.create({
          account_id: accountId,
          name: values.name ?? fail('--name is required'),
          permissions: parsePermissions(values.permissions),
          models: models ?? null,
          ip_allowlist: list(values.ip) ?? null,
          rpm: values.rpm ? number(values.rpm, 'rpm') : null,
          max_output_tokens: values['max-output-tokens'] ? positiveInteger(values['max-output-tokens'], 'max-output-tokens') : null,
          limits: (values.limit ?? []).map(parseLimit),
          paused: values.paused ?? false,
          expires_at: values['expires-at'] ? number(values['expires-at'], 'expires-at') : null,
        });
        print({ ...viewKey(record), key: secret });
        break;
      }
      case 'keys list':
        print((await keys.list(values.account ? { accountId: values.account } : {})).map(viewKey));
        break;
      case 'keys pause':
      case 'keys unpause':
      case 'keys revoke': {
        const id = positionals[0] ?? fail(`usage: agent-api keys ${action} KEY_ID`);
        const key = action === 'revoke' ? await keys.revoke(id) : await keys.update(id, { paused: action === 'pause' });
        print(key ? viewKey(key) : fail('no such key'));
        break;
      }
      default:
        fail(HELP);
    }
  } finally {
    await store.close();
  }
}

await main(process.argv.slice(2));
