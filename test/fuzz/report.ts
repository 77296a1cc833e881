// The printed summary, and one reproduction per distinct failure (the smallest request
// that showed it), so a failing run says what to fix without a rerun.
import type { Case } from './case.ts';
import type { Sent } from './runner.ts';

export interface HealthzStats {
  samples: number;
  failed: number;
  over: number;
  maxMs: number;
  p99Ms: number;
  /** the slowest samples, with the requests in flight then */
  worst: { at: number; ms: number; ok: boolean; error?: string; inFlight: string[] }[];
}

export interface Summary {
  seed: number;
  database: string;
  sent: Sent[];
  paramMismatches: number;
  rowsLeaked: string[];
  creditsLeaked: string[];
  holdsLeft: string[];
  booksUnbalanced: string[];
  othersChanged: string[];
  prototype: string[];
  adminAfter: string[];
  exits: string[];
  healthz: HealthzStats;
  /** the same figures without the windows of hangs and restarts */
  healthzCalm: HealthzStats;
  notes: string[];
}

const n = (x: number) => x.toLocaleString('en-US');

export function statusCounts(sent: readonly Sent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of sent) {
    const label = s.disturbed ? 'lost in a restart' : s.outcome.parserClose ? 'closed (HTTP-level garbage)' : s.outcome.label;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

export function violationCount(sent: readonly Sent[], kinds: readonly string[]): number {
  return sent.filter((s) => !s.disturbed && s.outcome.violations.some((v) => kinds.includes(v.kind))).length;
}

export function summaryTable(s: Summary): string {
  const judged = s.sent.filter((x) => !x.disturbed);
  const counts = Object.entries(statusCounts(s.sent)).sort(([a], [b]) => a.localeCompare(b));
  const rows: [string, string][] = [
    ['requests', n(s.sent.length)],
    ['by status', counts.map(([k, v]) => `${k}: ${n(v)}`).join(', ')],
    ['by category (count, mean ms)', categoryLine(s.sent)],
    ['5xx', n(violationCount(judged, ['5xx']))],
    ['shape violations', n(violationCount(judged, ['shape', 'no-request-id']))],
    ['no answer (well-formed request)', n(violationCount(judged, ['no-answer']))],
    ['timeouts', n(violationCount(judged, ['timeout']))],
    ['accepted but should be refused', `${n(violationCount(judged, ['accepted']))} (of ${n(judged.filter((x) => x.c.expect.refuse || x.c.expect.status).length)} that must be refused)`],
    ['wrong status / code', n(violationCount(judged, ['status', 'code']))],
    ['param mismatches', `${n(s.paramMismatches)} (of ${n(judged.filter((x) => x.c.expect.param && x.outcome.status !== null && x.outcome.status >= 400).length)} refusals whose param was checked)`],
    ['rows leaked', n(s.rowsLeaked.length)],
    ['credits leaked', n(s.creditsLeaked.length)],
    ['holds left', n(s.holdsLeft.length)],
    ['books unbalanced', n(s.booksUnbalanced.length)],
    ["other account's objects changed", n(s.othersChanged.length)],
    ['Object.prototype changes', n(s.prototype.length)],
    ['admin API after the run', s.adminAfter.length ? s.adminAfter.join('; ') : 'ok'],
    ['child exits / restarts', n(s.exits.length)],
    ['/healthz', healthzLine(s.healthz)],
    ['/healthz outside hangs', healthzLine(s.healthzCalm)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return [`fuzz summary (seed ${s.seed}, ${s.database})`, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
}

/** What an answer says with its ids and numbers blurred, so one defect on many operations is one failure. */
function fingerprint(s: Sent): string {
  const o = s.outcome;
  const judged = o.violations.filter((v) => ['param', 'code', 'status', 'accepted'].includes(v.kind));
  if (judged.length) return judged.map((v) => v.detail.replace(/"[^"]*"/g, '"…"').replace(/\d+/g, '#')).join('; ');
  return o.preview
    .slice(0, 160)
    .replace(/(req|acct|key|chatcmpl|cmpl|ctx)[-_][A-Za-z0-9]+/g, '$1…')
    .replace(/'[^']*'/g, "'…'")
    .replace(/(.)\1{7,}/g, '$1…')
    .replace(/\d+/g, '#');
}

/**
 * Failures grouped by what went wrong (the violated invariants, the category and the
 * answer's fingerprint), with the operations that showed it and the smallest case.
 */
export function distinctFailures(sent: readonly Sent[], secrets: Record<string, string>): string[] {
  const groups = new Map<string, Sent[]>();
  for (const s of sent) {
    if (s.disturbed || s.outcome.violations.length === 0) continue;
    const kinds = [...new Set(s.outcome.violations.map((v) => v.kind))].sort().join('+');
    const key = `${kinds} | ${s.c.category} | ${fingerprint(s)}`;
    const list = groups.get(key) ?? [];
    list.push(s);
    groups.set(key, list);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, list]) => {
      const smallest = list.reduce((a, b) => (b.size < a.size ? b : a));
      const ops = [...new Set(list.map((x) => x.c.op.id))];
      return [
        `[${key}] ×${list.length} on ${ops.length} operation(s): ${ops.slice(0, 6).join(', ')}${ops.length > 6 ? ', …' : ''}`,
        reproduction(smallest.c, smallest.outcome.preview, secrets),
        ...smallest.outcome.violations.map((v) => `    violation: ${v.kind}: ${v.detail}`),
      ].join('\n');
    });
}

/** A case as a request someone can send by hand, and what came back. */
export function reproduction(c: Case, answer: string, secrets: Record<string, string>): string {
  const req = c.build();
  const target = req.target.length > 200 ? `${JSON.stringify(req.target.slice(0, 200))}… (${req.target.length} chars)` : JSON.stringify(req.target);
  // Keys are named by who holds them, not printed.
  const redact = (v: string) => Object.entries(secrets).reduce((acc, [who, secret]) => acc.split(secret).join(who === 'admin' ? '<admin token>' : `<key ${who}>`), v);
  const cut = (v: string, max: number) => (v.length > max ? `${v.slice(0, max)}… (${v.length} chars)` : v);
  const shown = req.headers.length > 12 ? [...req.headers.slice(0, 10), ['…', `${req.headers.length - 10} more headers`] as const] : req.headers;
  const headers = shown.map(([name, value]) => `${printable(Buffer.from(cut(name, 60), 'latin1')).slice(1, -1)}: ${printable(Buffer.from(cut(redact(value), 120), 'latin1'))}`);
  const body = req.body ? `${printable(req.body.subarray(0, 300))}${req.body.length > 300 ? `… (${n(req.body.length)} bytes)` : ''}` : '(none)';
  return [
    `    case: ${c.category} as ${c.who}: ${JSON.stringify(c.note).slice(1, -1)}`,
    `    request: ${req.method} ${target}${headers.length ? `\n      ${headers.join('\n      ')}` : ''}`,
    `    body: ${body}`,
    `    answer: ${answer.replace(/\s+/g, ' ').slice(0, 300)}`,
  ].join('\n');
}

/** Bytes as a quoted string: UTF-8 where they are valid UTF-8, \xNN escapes where not. */
function printable(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (Buffer.from(text).equals(bytes) && !/[\u007f-\u009f]/.test(text)) return JSON.stringify(text);
  return `"${[...bytes].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('')}"`;
}

function categoryLine(sent: readonly Sent[]): string {
  const by = new Map<string, { count: number; ms: number }>();
  for (const x of sent) {
    const c = by.get(x.c.category) ?? { count: 0, ms: 0 };
    c.count++;
    c.ms += x.end - x.start;
    by.set(x.c.category, c);
  }
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v.count} (${Math.round(v.ms / v.count)})`)
    .join(', ');
}

const healthzLine = (h: HealthzStats) =>
  `${n(h.samples)} polls, max ${h.maxMs.toFixed(1)} ms, p99 ${h.p99Ms.toFixed(1)} ms, over 100 ms: ${n(h.over)}, failed: ${n(h.failed)}`;
