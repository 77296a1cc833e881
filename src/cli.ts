// `node bin/agent-api.js ...`: the admin operations on the configured database (DATABASE_URL or
// SQLite under DATA_DIR), for operators without the HTTP admin API at hand. Output is
// JSON on stdout (the activity table excepted); notes for the reader go to stderr.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AccountsService, viewAccount } from './accounts/accounts-service.ts';
import { creditsAmount, CreditsRefused } from './accounts/money.ts';
import { queryActivity, viewActivity } from './activity/activity-query.ts';
import { LocalSignals, RedisSignals, type Signals } from './cluster/signals.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { findModel } from './contract/models.ts';
import { newAdminToken, removeAdminToken, storeAdminToken } from './keys/admin-tokens.ts';
import { keyLimitSchema, type KeyLimit } from './keys/key-limits.ts';
import { KeysService, viewKey } from './keys/keys-service.ts';
import { PERMISSIONS, type Permission } from './keys/permissions.ts';
import { databaseError, StartupError, startupErrorLine } from './startup/errors.ts';
import { checkStorage } from './startup/preflight.ts';
import { openStore, type Store } from './store/db.ts';

const USAGE = `Usage: agent-api <command> [options]

  serve                                   start the server (same as npm start)
  accounts create --name N [--credits C]  create an account
  accounts list                           list accounts
  credits add --account A --amount C      add (or with a negative amount remove) credits;
      [--correction]                      (--correction: a debit that may go below zero)
  keys create --account A --name N        create a key; prints its secret once
      [--permissions embeddings,files,...|all] [--models agent,agent-embed,...]
      [--ip 10.0.0.0/8,127.0.0.1] [--rpm N] [--max-output-tokens N]
      [--limit metric:period:max ...]
      [--expires-at UNIX_SECONDS] [--paused]
  keys list [--account A]                 list keys (never their secrets)
  keys pause|unpause|revoke KEY_ID        change a key
  activity [--account A] [--key KEY_ID] [--limit N] [--json]
                                          recent requests, newest first
  admin-token rotate                      make a new admin token; prints it once
  admin-token remove                      delete the stored admin token (admin API off
                                          unless AGENT_API_ADMIN_TOKEN is set)
  --version                               print the version
  --help                                  print this

A is an account id (acct_...) or name (e.g. default).
Configuration comes from the environment, as for the server (docs/configuration.md).`;

/** Wrong command line: one line naming the problem, then the usage; exit 2. */
class UsageError extends Error {}

/** A request the database cannot satisfy (no such account, ...): one line, exit 2. */
class CommandError extends Error {}

function fail(message: string): never {
  throw new CommandError(message);
}

type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean };
const OPTIONS = {
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
  correction: { type: 'boolean' },
  key: { type: 'string' },
  json: { type: 'boolean' },
} satisfies Record<string, OptionSpec>;
type Flag = keyof typeof OPTIONS;
type Values = { [K in Flag]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

interface Context {
  values: Values;
  positionals: string[];
  config: Config;
  store: Store;
  accounts: AccountsService;
  keys: KeysService;
  /** Over Redis for the commands that change a key when REDIS_URL is set, so running servers drop it at once. */
  signals: Signals;
}

interface Command {
  flags: Flag[];
  /** The positional arguments it takes, by name (for the usage error). */
  args?: string[];
  run(ctx: Context): Promise<void>;
}

const KEY_FLAGS: Flag[] = ['account', 'name', 'permissions', 'models', 'ip', 'rpm', 'max-output-tokens', 'limit', 'expires-at', 'paused'];

const COMMANDS: Record<string, Command> = {
  'accounts create': {
    flags: ['name', 'credits'],
    async run({ values, accounts }) {
      const name = values.name ?? fail('--name is required');
      if (name.startsWith('acct_')) fail('--name must not start with acct_ (account ids do)');
      if (await accounts.getByName(name)) fail(`an account named '${name}' already exists`);
      const credits = values.credits ? money(values.credits, 'credits') : 0;
      if (credits < 0) fail('--credits must not be negative');
      print(viewAccount(await accounts.create(name, credits)));
    },
  },
  'accounts list': {
    flags: [],
    async run({ accounts }) {
      print((await accounts.list()).map(viewAccount));
    },
  },
  'credits add': {
    flags: ['account', 'amount', 'correction'],
    async run({ values, accounts }) {
      const account = await findAccount(accounts, values.account);
      const amount = money(values.amount, 'amount');
      if (amount === 0) fail('--amount must not be 0');
      const updated = await accounts.addCredits(account.id, amount, 'cli grant', { correction: values.correction === true }).catch((err: unknown) => {
        throw err instanceof CreditsRefused ? new CommandError(err.message.replace('Send "correction": true', 'Pass --correction')) : err;
      });
      print(viewAccount(updated ?? fail('no such account')));
    },
  },
  'keys create': {
    flags: KEY_FLAGS,
    async run({ values, accounts, keys }) {
      const account = await findAccount(accounts, values.account);
      const models = list(values.models);
      for (const m of models ?? []) if (!findModel(m)) fail(`unknown model '${m}'`);
      const { record, secret } = await keys.create({
        account_id: account.id,
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
      // A new secret was never looked up, so no server has a cached miss for it.
      note('The key works at once on a running server (same database). Its secret is shown only this once.');
    },
  },
  'keys list': {
    flags: ['account'],
    async run({ values, accounts, keys }) {
      const accountId = values.account === undefined ? undefined : (await findAccount(accounts, values.account)).id;
      print((await keys.list(accountId ? { accountId } : {})).map(viewKey));
    },
  },
  ...Object.fromEntries(
    (['pause', 'unpause', 'revoke'] as const).map((action): [string, Command] => [
      `keys ${action}`,
      {
        flags: [],
        args: ['KEY_ID'],
        async run({ positionals, keys, config, signals }) {
          const id = positionals[0]!;
          const key = action === 'revoke' ? await keys.revoke(id) : await keys.update(id, { paused: action === 'pause' });
          print(key ? viewKey(key) : fail(`no key with id '${id}'`));
          if (signals.shared) note('Every running server on this REDIS_URL applies this at once.');
          else note(`A running server applies this ${within(config.keyCacheMs)}.`);
        },
      },
    ]),
  ),
  activity: {
    flags: ['account', 'key', 'limit', 'json'],
    async run({ values, accounts, store }) {
      const accountId = values.account === undefined ? undefined : (await findAccount(accounts, values.account)).id;
      const limitText = values.limit?.at(-1);
      const limit = limitText === undefined ? 20 : positiveInteger(limitText, 'limit');
      if (limit > 1000) fail('--limit must be at most 1000');
      const page = await queryActivity(store.db, { account_id: accountId, key_id: values.key, limit, order: 'desc' });
      if (values.json) print(page.data);
      else console.log(activityTable(page.data));
    },
  },
  'admin-token rotate': {
    flags: [],
    async run({ store, config }) {
      const token = newAdminToken();
      await storeAdminToken(store.db, token, { replace: true });
      print({ object: 'admin_token', token, created_at: Math.floor(Date.now() / 1000) });
      note(`Shown only this once. A running server accepts it, and refuses the previous token, ${within(config.keyCacheMs)}.`);
      if (config.adminToken) note('AGENT_API_ADMIN_TOKEN is set here: a server started with it uses that token, not the stored one.');
    },
  },
  'admin-token remove': {
    flags: [],
    async run({ store, config }) {
      const removed = await removeAdminToken(store.db);
      print({ object: 'admin_token', deleted: removed });
      if (removed) note(`A running server closes the admin API ${within(config.keyCacheMs)} (unless it was started with AGENT_API_ADMIN_TOKEN).`);
    },
  },
};

const GROUPS = [...new Set(Object.keys(COMMANDS).map((c) => c.split(' ')[0]!)), 'serve'];

// --- helpers -----------------------------------------------------------------

const print = (v: unknown) => console.log(JSON.stringify(v, null, 2));
const note = (text: string) => console.error(text);
const within = (cacheMs: number) => (cacheMs === 0 ? 'at once (AGENT_API_KEY_CACHE_MS=0)' : `within ${seconds(cacheMs)} (AGENT_API_KEY_CACHE_MS=${cacheMs})`);
const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;
const list = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined);

function number(v: string | undefined, flag: string): number {
  const n = Number(v);
  if (v === undefined || v.trim() === '' || !Number.isFinite(n)) fail(`--${flag} must be a number`);
  return n;
}

/** A credit amount under the admin API's rules (accounts/money.ts). */
function money(v: string | undefined, flag: string): number {
  const parsed = creditsAmount.safeParse(number(v, flag));
  if (!parsed.success) fail(`--${flag} ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

function positiveInteger(v: string, flag: string): number {
  const n = number(v, flag);
  if (!Number.isInteger(n) || n < 1) fail(`--${flag} must be a whole number of at least 1`);
  return n;
}

async function findAccount(accounts: AccountsService, ref: string | undefined) {
  if (ref === undefined) fail('--account is required (an account id or name)');
  return (await accounts.find(ref)) ?? fail(`no such account '${ref}' (give an account id or name)`);
}

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

function activityTable(rows: ReturnType<typeof viewActivity>[]): string {
  if (rows.length === 0) return 'No requests recorded yet.';
  const header = ['TIME (UTC)', 'STATUS', 'REQUEST', 'MODEL', 'TOKENS IN/OUT', 'CREDITS', 'MS', 'KEY', 'REQUEST ID'];
  const body = rows.map((r) => [
    new Date(r.created_at_ms).toISOString().slice(0, 19).replace('T', ' '),
    r.error_code ? `${r.status} ${r.error_code}` : String(r.status),
    `${r.method} ${r.endpoint}`,
    r.model ?? '-',
    `${r.input_tokens}/${r.output_tokens}`,
    String(r.credits_settled),
    String(r.latency_ms),
    r.key_id ?? '-',
    r.request_id,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  return [header, ...body].map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

function version(): string {
  // src/cli.ts and dist/cli.js both sit one level below package.json.
  const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** parseArgs' own messages are long and suggest `--`; ours name the flag. */
function parseFlags(name: string, command: Command, args: string[]) {
  const options = Object.fromEntries(command.flags.map((f) => [f, OPTIONS[f]])) as Record<string, OptionSpec>;
  // `--amount -3`: parseArgs would read -3 as an option; a negative number is the value.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!.startsWith('--') ? options[args[i]!.slice(2)] : undefined;
    if (flag?.type === 'string' && /^-\d/.test(args[i + 1] ?? '')) joined.push(`${args[i]}=${args[++i]}`);
    else joined.push(args[i]!);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: joined, options, allowPositionals: true, strict: true });
  } catch (err) {
    const code = (err as { code?: string }).code;
    const flag = /'(-[^' ]+)/.exec((err as Error).message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option '${flag}' for '${name}'`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`option '${flag}' needs a value`);
    throw new UsageError((err as Error).message.split('\n')[0]!);
  }
  const wanted = command.args ?? [];
  if (parsed.positionals.length < wanted.length) throw new UsageError(`'${name}' needs ${wanted.join(' ')}`);
  if (parsed.positionals.length > wanted.length) throw new UsageError(`unexpected argument '${parsed.positionals[wanted.length]}' for '${name}'`);
  return { values: parsed.values as Values, positionals: parsed.positionals };
}

/** The command named by argv, and the rest of argv. */
function pickCommand(argv: string[]): { name: string; command: Command; rest: string[] } {
  const [group = '', action] = argv;
  if (group.startsWith('-')) throw new UsageError(`unknown option '${group}'`);
  if (!GROUPS.includes(group)) throw new UsageError(`unknown command '${group}'`);
  if (COMMANDS[group]) return { name: group, command: COMMANDS[group], rest: argv.slice(1) };
  const name = `${group} ${action ?? ''}`.trim();
  const command = COMMANDS[name];
  if (command) return { name, command, rest: argv.slice(2) };
  const actions = Object.keys(COMMANDS).filter((c) => c.startsWith(`${group} `)).map((c) => c.split(' ')[1]);
  throw new UsageError(action === undefined || action.startsWith('-') ? `'${group}' needs one of: ${actions.join(', ')}` : `unknown command '${name}'`);
}

async function main(argv: string[]): Promise<void> {
  const first = argv[0];
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    console.log(USAGE);
    return;
  }
  if (first === '--version' || first === '-v' || first === 'version') {
    console.log(version());
    return;
  }
  if (first === 'serve') {
    if (argv.length > 1) throw new UsageError(`unexpected argument '${argv[1]}' for 'serve' (configure the server with environment variables)`);
    await import('./main.ts');
    return;
  }
  const { name, command, rest } = pickCommand(argv);
  const { values, positionals } = parseFlags(name, command, rest);
  const config = loadConfig();
  await checkStorage(config);
  const store = await openStore(config.database).catch((err: unknown) => {
    throw databaseError(err, config.database) ?? err;
  });
  const changesKeys = /^keys (pause|unpause|revoke)$/.test(name);
  const quiet = { info() {}, warn() {} };
  const signals = config.redisUrl && changesKeys ? new RedisSignals({ url: config.redisUrl, log: quiet }) : new LocalSignals();
  try {
    await signals.ready();
    await command.run({ values, positionals, config, store, accounts: new AccountsService(store.db), keys: new KeysService(store.db, 0, signals), signals });
  } finally {
    await signals.close();
    await store.close();
  }
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    console.error(`agent-api: ${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (err instanceof CommandError) {
    console.error(`agent-api: ${err.message}`);
    process.exitCode = 2;
  } else if (err instanceof StartupError || err instanceof ConfigError) {
    console.error(startupErrorLine(err, false));
    process.exitCode = 1;
  } else {
    console.error(`agent-api: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
