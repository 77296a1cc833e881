// Labelled counters and histograms for the per-request path, registered in a prom-client
// Registry beside its own metrics. prom-client's labelled inc/observe validates the
// labels, sorts and hashes them into a string and builds objects on every call; at
// thousands of requests a second that was several microseconds a request. Here a label
// set is found by walking one Map per label value (no string built, nothing allocated
// once the set has been seen), and prom-client reads the figures only at scrape time
// through the `get()` its Registry calls on every metric.
import type { Metric, Registry } from 'prom-client';

type LabelValue = string | number;

interface Series<T> {
  readonly labels: Record<string, LabelValue>;
  readonly value: T;
}

/** One series per distinct label values, found without building a key. */
class SeriesTree<T> {
  private readonly root = new Map<LabelValue, unknown>();
  readonly all: Series<T>[] = [];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: () => T,
  ) {}

  find(values: readonly LabelValue[]): T {
    let node: Map<LabelValue, unknown> = this.root;
    const last = this.labelNames.length - 1;
    for (let i = 0; i < last; i++) {
      let next = node.get(values[i]!) as Map<LabelValue, unknown> | undefined;
      if (!next) node.set(values[i]!, (next = new Map()));
      node = next;
    }
    let series = node.get(values[last]!) as Series<T> | undefined;
    if (!series) {
      const labels: Record<string, LabelValue> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      series = { labels, value: this.make() };
      node.set(values[last]!, series);
      this.all.push(series);
    }
    return series.value;
  }

  clear(): void {
    this.root.clear();
    this.all.length = 0;
  }
}

interface Definition {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Registry[];
}

abstract class FastMetric {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum' as const;
  abstract readonly type: 'counter' | 'histogram';

  constructor(def: Definition) {
    this.name = def.name;
    this.help = def.help;
    // The Registry only reads name, type and get() (and calls reset()).
    for (const r of def.registers) r.registerMetric(this as unknown as Metric);
  }

  abstract reset(): void;
}

export class FastCounter extends FastMetric {
  readonly type = 'counter' as const;
  private readonly series: SeriesTree<{ n: number }>;

  constructor(def: Definition) {
    super(def);
    this.series = new SeriesTree(def.labelNames, () => ({ n: 0 }));
  }

  /** `values` in the order of `labelNames`. */
  inc(values: readonly LabelValue[], by = 1): void {
    this.series.find(values).n += by;
  }

  get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.series.all.map((s) => ({ labels: s.labels, value: s.value.n })) };
  }

  reset(): void {
    this.series.clear();
  }
}

interface Buckets {
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class FastHistogram extends FastMetric {
  readonly type = 'histogram' as const;
  private readonly series: SeriesTree<Buckets>;

  constructor(
    def: Definition,
    private readonly bounds: readonly number[],
  ) {
    super(def);
    this.series = new SeriesTree(def.labelNames, () => ({ counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 }));
  }

  observe(values: readonly LabelValue[], value: number): void {
    const b = this.series.find(values);
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    b.counts[i]! += 1;
    b.sum += value;
    b.count += 1;
  }

  get() {
    const values: { labels: Record<string, LabelValue>; value: number; metricName: string }[] = [];
    for (const { labels, value: b } of this.series.all) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += b.counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: b.count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: b.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: b.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
