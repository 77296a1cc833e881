// Entry point: `npm start`. Serves the API until SIGTERM/SIGINT, then shuts down
// gracefully: stop accepting, finish in-flight requests, close the database.
import { createApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config);
  const address = await app.http.listen({ host: config.host, port: config.port });
  app.http.log.info({ database: config.database.kind, address }, `agent-api serving ${address}/v1`);

  const stop = (signal: string) => {
    app.http.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.http.log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
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
  if (err instanceof ConfigError) console.error(err.message);
  else console.error('agent-api failed to start:', err);
  process.exit(1);
});
