// The service's Prometheus metrics (GET /metrics). One registry per app, not
// prom-client's global one, so several apps in one process (tests) keep their own
// counts. Labels are bounded: route patterns (never URLs or ids), methods, statuses,
// our model ids, upstream model names from the configuration, failure kinds.
import type { ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { UpstreamCallReport } from '../providers/upstream-observer.ts';
import { FastCounter, FastHistogram } from './fast-metrics.ts';

/** Seconds: from a 5 ms JSON answer to a long stream. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** One finished request, as the finish step has it. */
export interface RequestFigures {
  route: string;
  method: string;
  status: number;
  seconds: number;
  /** Our model id, when the request ran a model. */
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  /** micro-credits */
  creditsReserved: number;
  creditsSettled: number;
}

export class Metrics {
  readonly registry = new Registry();
  // Per-request figures in fast-metrics.ts's counters; the rest in prom-client's.
  private readonly requests: FastCounter;
  private readonly requestSeconds: FastHistogram;
  private readonly tokens: FastCounter;
  private readonly creditsReserved: Counter;
  private readonly creditsSettled: Counter;
  private readonly upstreamRequests: FastCounter;
  private readonly upstreamErrors: Counter<'kind' | 'status'>;
  private readonly upstreamSeconds: FastHistogram;
  private readonly upstreamFirstByte: FastHistogram;
  private readonly openStreams: Gauge;
  private activityQueue: () => number = () => 0;

  /** `instance`: AGENT_API_INSTANCE_ID, a label on every series, so several instances' scrapes stay apart. */
  constructor(instance?: string) {
    if (instance !== undefined) this.registry.setDefaultLabels({ instance });
    const registers = [this.registry];
    // Process CPU, memory, event-loop lag, GC: read at scrape time, next to free per request.
    collectDefaultMetrics({ register: this.registry });
    this.requests = new FastCounter({ name: 'http_requests_total', help: 'Requests answered, by route pattern, method and status (499: the client went away).', labelNames: ['route', 'method', 'status'], registers });
    this.requestSeconds = new FastHistogram({ name: 'http_request_duration_seconds', help: 'Time from arrival to the end of the response (whole stream), by route pattern and method.', labelNames: ['route', 'method'], registers }, DURATION_BUCKETS);
    this.tokens = new FastCounter({ name: 'model_tokens_total', help: 'Model tokens charged, by model and type (input, output).', labelNames: ['model', 'type'], registers });
    this.creditsReserved = new Counter({ name: 'credits_reserved_total', help: 'Credits reserved before model calls.', registers });
    this.creditsSettled = new Counter({ name: 'credits_settled_total', help: 'Credits charged when model calls settled.', registers });
    this.upstreamRequests = new FastCounter({ name: 'upstream_requests_total', help: 'Calls to the upstream model server, by upstream model, operation and outcome (ok, error, aborted).', labelNames: ['model', 'operation', 'outcome'], registers });
    this.upstreamErrors = new Counter({ name: 'upstream_errors_total', help: 'Failed upstream calls, by kind (status, timeout, connection, stream) and HTTP status ("none" without one).', labelNames: ['kind', 'status'], registers });
    this.upstreamSeconds = new FastHistogram({ name: 'upstream_request_duration_seconds', help: 'Upstream call time, retries and the whole stream included.', labelNames: ['model', 'operation', 'outcome'], registers }, DURATION_BUCKETS);
    this.upstreamFirstByte = new FastHistogram({ name: 'upstream_first_byte_seconds', help: 'Time to the first byte of the upstream answer, retries included.', labelNames: ['model', 'operation'], registers }, DURATION_BUCKETS);
    this.openStreams = new Gauge({ name: 'sse_streams_open', help: 'Server-sent event streams being written now.', registers });
    const queue = () => this.activityQueue();
    new Gauge({
      name: 'activity_log_queue_depth',
      help: 'Activity rows waiting for their batch write.',
      registers,
      collect() {
        this.set(queue());
      },
    });
  }

  /** Where the activity log's queue depth is read at scrape time. */
  watchActivityQueue(depth: () => number): void {
    this.activityQueue = depth;
  }

  request(f: RequestFigures): void {
    this.requests.inc([f.route, f.method, f.status]);
    this.requestSeconds.observe([f.route, f.method], f.seconds);
    if (f.inputTokens > 0 || f.outputTokens > 0) {
      const model = f.model ?? 'none';
      this.tokens.inc([model, 'input'], f.inputTokens);
      this.tokens.inc([model, 'output'], f.outputTokens);
    }
    if (f.creditsReserved > 0) this.creditsReserved.inc(f.creditsReserved / 1_000_000);
    if (f.creditsSettled > 0) this.creditsSettled.inc(f.creditsSettled / 1_000_000);
  }

  upstreamCall(r: UpstreamCallReport): void {
    this.upstreamRequests.inc([r.model, r.operation, r.outcome]);
    this.upstreamSeconds.observe([r.model, r.operation, r.outcome], r.seconds);
    if (r.firstByteSeconds !== undefined) this.upstreamFirstByte.observe([r.model, r.operation], r.firstByteSeconds);
    if (r.failure) this.upstreamErrors.inc({ kind: r.failure.kind, status: r.failure.status ?? 'none' });
  }

  /** Counts an event stream as open until its response closes (finished, cut or client gone). */
  streamOpened(res: ServerResponse): void {
    if (res.destroyed) return; // its 'close' may have fired already, and would never bring the count back down
    this.openStreams.inc();
    res.once('close', () => this.openStreams.dec());
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's metrics (decorated in installPipeline), for code that has only the reply (sse.ts). */
    metrics: Metrics;
  }
}
