// Starts a real agent-api on a random port for end-to-end tests, on the database the
// test run selected (TEST_DATABASE=sqlite|postgres; PostgreSQL gets a uniquely named
// database that is dropped afterwards), with helpers for the admin API and the
// official openai SDK.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { createApp, type App, type AppOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestServer {
  app: App;
  config: Config;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** origin + /v1 */
  baseURL: string;
  admin<T = any>(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
  createAccount(credits?: number, name?: string): Promise<{ id: string }>;
  createKey(opts?: Record<string, unknown> & { account_id?: string }): Promise<{ id: string; key: string; account_id: string }>;
  openai(apiKey: string, opts?: ConstructorParameters<typeof OpenAI>[0]): OpenAI;
  /** fetch against the origin with an optional bearer key */
  fetch(urlPath: string, init?: RequestInit & { key?: string }): Promise<Response>;
  close(): Promise<void>;
}

let counter = 0;

/** Containers are tmpfs mounts (as root) that outlive the app: unmounted before their directory goes. */
export function unmountUnder(dir: string): void {
  if (process.getuid?.() !== 0) return;
  const info = fs.existsSync('/proc/self/mountinfo') ? fs.readFileSync('/proc/self/mountinfo', 'utf8') : '';
  const mounts = info.split('\n').map((line) => line.split(' ')[4]).filter((m): m is string => !!m && m.startsWith(`${path.resolve(dir)}/`));
  for (const m of mounts.sort().reverse()) spawnSync('umount', ['-l', m]);
}

/**
 * A fresh, empty database on the engine the run selected (TEST_DATABASE): a SQLite file
 * in a temp dir, or a uniquely named PostgreSQL database. `cleanup` removes it.
 */
export async function scratchDatabase(): Promise<{ url: string; dir: string; cleanup: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-test-'));
  // Containers run as an unprivileged uid, which must reach DATA_DIR/containers (bwrap binds it as that uid).
  if (process.getuid?.() === 0) fs.chmodSync(dir, 0o711);
  const removeDir = async () => {
    unmountUnder(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  if (process.env.TEST_DATABASE !== 'postgres') return { url: `sqlite:${path.join(dir, 'test.sqlite')}`, dir, cleanup: removeDir };
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  if (!adminUrl) throw new Error('TEST_PG_ADMIN_URL is not set (run the suite with npm test)');
  const name = `agent_api_test_${process.pid}_${Date.now()}_${counter++}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dir,
    cleanup: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      await removeDir();
    },
  };
}

export async function startTestServer(env: Record<string, string> = {}, options: AppOptions = {}): Promise<TestServer> {
  const cleanups: (() => Promise<void> | void)[] = [];
  const scratch = await scratchDatabase();
  cleanups.push(scratch.cleanup);
  const tmp = scratch.dir;
  const databaseUrl = scratch.url;

  const config = loadConfig({
    DATA_DIR: tmp,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_ACTIVITY_FLUSH_MS: '10',
    ...env,
  });
  const app = await createApp(config, { env: { ...process.env, ...env }, ...options });
  await app.http.listen({ host: '127.0.0.1', port: 0 });
  const address = app.http.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const origin = `http://127.0.0.1:${address.port}`;
  const baseURL = `${origin}/v1`;

  const admin: TestServer['admin'] = async (method, urlPath, body) => {
    const res = await fetch(`${origin}/admin/v1${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json(), headers: res.headers };
  };

  const server: TestServer = {
    app,
    config,
    origin,
    baseURL,
    admin,
    async createAccount(credits = 100, name = `acct-${Date.now()}-${counter++}`) {
      const res = await admin('POST', '/accounts', { name, credits });
      if (res.status !== 201) throw new Error(`create account: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async createKey(opts = {}) {
      const accountId = opts.account_id ?? (await server.createAccount()).id;
      const res = await admin('POST', '/keys', { name: 'test key', ...opts, account_id: accountId });
      if (res.status !== 201) throw new Error(`create key: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    openai: (apiKey, opts) => new OpenAI({ apiKey, baseURL, maxRetries: 0, ...opts }),
    fetch: (urlPath, init = {}) => {
      const { key, headers, ...rest } = init;
      return fetch(origin + urlPath, {
        ...rest,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string> | undefined) },
      });
    },
    async close() {
      await app.close();
      for (const c of cleanups.reverse()) await c();
    },
  };
  return server;
}

/** Every permission switch on. */
export const ALL_SWITCHES = {
  embeddings: true,
  audio: true,
  image_generation: true,
  files: true,
  decisions: true,
  code_interpreter: true,
  function_calling: true,
  file_search: true,
  remote_mcp: true,
  skills: true,
  mcp: true,
  moderate: true,
  ai_gateway: true,
  agent_tools: true,
  plans: true,
  blackbox_record: true,
  blackbox_write: true,
  blackbox_read: true,
  blackbox_content: true,
  blackbox_manage: true,
};
