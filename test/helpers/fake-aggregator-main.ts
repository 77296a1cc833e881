// The fake aggregator in a process of its own, for a bench (its work then does not share the
// measured process's CPU), recording nothing:
//
//   PORT=18081 node --import tsx test/helpers/fake-aggregator-main.ts
//
// Environment: PORT (default 18081), FAKE_AGGREGATOR_KEY (the only bearer key accepted; default
// any), FAKE_AGGREGATOR_GZIP=1 (gzip answers to requests that accept it). Prints its base URL
// (`http://127.0.0.1:PORT/api/v1`) on stdout; SIGTERM or SIGINT stops it.
import { startFakeAggregator } from './fake-aggregator.ts';

const fake = await startFakeAggregator({
  port: Number(process.env.PORT ?? 18081),
  record: false,
  gzip: process.env.FAKE_AGGREGATOR_GZIP === '1',
  ...(process.env.FAKE_AGGREGATOR_KEY ? { apiKey: process.env.FAKE_AGGREGATOR_KEY } : {}),
});
process.stdout.write(`${fake.url}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void fake.close().then(() => process.exit(0)));
