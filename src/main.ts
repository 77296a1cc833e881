// Entry point: `npm start`. Checks what a start needs (configuration, the data directory
// or PostgreSQL, the port), creates the first key and admin token on an empty database,
// logs one summary line and serves until SIGTERM/SIGINT, then shuts down gracefully:
// stop accepting, finish in-flight requests, close the database. A start that cannot
// work exits 1 with one line saying what to change.
import './startup/gc-tuning.ts';
import { createApp, type App } from './app.ts';
import { firstRunBanner } from './bootstrap/banner.ts';
import { firstRun } from './bootstrap/first-run.ts';
import { ConfigError, loadConfig } from './config.ts';
import { hasStoredAdminToken } from './keys/admin-tokens.ts';
import { loadUpstreamConfig, type UpstreamConfig } from './providers/remote/openai-compatible/config.ts';
import { databaseError, listenError, startupErrorLine } from './startup/errors.ts';
import { checkStorage } from './startup/preflight.ts';
import { describeAdmin, describeContainers, describeDatabase, describeEngine, describeSpeech, describeTranscription, summaryLine } from './startup/summary.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  let upstream: UpstreamConfig | undefined;
  try {
    upstream = loadUpstreamConfig(process.env);
  } catch (err) {
    // The message names the variable (UPSTREAM_...), as ConfigError's do.
    throw new ConfigError(`invalid configuration: ${(err as Error).message}`);
  }
  await checkStorage(config);
  const app = await createApp(config).catch((err: unknown) => {
    throw databaseError(err, config.database) ?? err;
  });

  // The sandbox probe (a run of python3 in bubblewrap) overlaps listening and the first run.
  const containers = app.containers.status();
  let address: string;
  try {
    address = await app.http.listen({ host: config.host, port: config.port });
  } catch (err) {
    // The probe first: it leaves nothing behind once it has ended.
    await containers;
    await app.close().catch(() => undefined);
    throw listenError(err, config) ?? err;
  }

  // After listen: a start that cannot serve creates no secret nobody would see.
  const created = await firstRun(app.services.store.db, config);
  if (created.adminToken) app.services.adminTokens.forget();
  const summary = {
    url: `${address}/v1`,
    engine: describeEngine(upstream),
    database: describeDatabase(config.database),
    admin: describeAdmin(await app.services.adminTokens.source(), config.adminToken !== undefined && (await hasStoredAdminToken(app.services.store.db))),
    containers: describeContainers(await containers),
    speech: describeSpeech(upstream, app.services.engines.for('speech', 'agent-voice')),
    transcription: describeTranscription(app.services.engines.for('transcription', 'agent-transcribe').status()),
  };
  app.http.log.info({ ...summary, address }, summaryLine(summary));
  const banner = firstRunBanner(created, address);
  // stderr, whatever LOG_LEVEL says: the only time these secrets are shown.
  if (banner) process.stderr.write(banner);

  handleSignals(app, config.shutdownGraceMs);
}

function handleSignals(app: App, graceMs: number): void {
  const stop = (signal: string) => {
    app.http.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.http.log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, graceMs);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.http.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  const level = process.env.LOG_LEVEL;
  process.stderr.write(`${startupErrorLine(err, level === 'debug' || level === 'trace')}\n`);
  process.exit(1);
});
