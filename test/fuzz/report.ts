// The printed summary, and one reproduction per distinct failure (the smallest request
// that showed it), so a failing run says what to fix without a rerun.
import type { Case } from './case.ts';
import type { LedgerFindings } from './ledger-check.ts';
import { HEALTHZ_BOUND_MS, type HealthzStats } from './healthz.ts';
import type { Incident, Sent } from './runner.ts';

export interface Summary {
  seed: number;
  database: string;
  sent: Sent[];
  /** hangs and exits, with when they happened (s from the start) */
  incidents: (Incident & { atS: number })[];
  /** operation + category pairs put aside after a hang, and how many cases were skipped */
  quarantined: [string, number][];
  ledger: LedgerFindings;
  othersChanged: string[];
  prototype: string[];
  adminAfter: string[];
  /** what the gateway's fake upstream saw that it must not (a caller's key) */
  upstream: string[];
  exits: string[];
  healthz: HealthzStats;
  /** the same figures without the windows of hangs and restarts */
  healthzCalm: HealthzStats;
  notes: string[];
  secrets: Record<string, string>;
}

/** Everything that breaks the gate; 0 passes. */
export function problemCount(s: Summary): number {
  const l = s.ledger;
  return (
    s.sent.filter((x) => !x.disturbed && x.outcome.violations.length > 0).length +
    l.rowsLeaked.length +
    l.creditsLeaked.length +
    l.holdsLeft.length +
    l.booksUnbalanced.length +
    s.othersChanged.length +
    s.prototype.length +
    s.adminAfter.length +
    s.upstream.length +
    s.exits.length +
    s.incidents.length +
    // A slow poll is a finding when a request in flight then stalls /healthz again replayed
    // alone (healthz.isolate); one nothing reproduces was the machine's load, which must
    // slow the gate, not fail it. The slow polls are still listed in the report.
    s.healthzCalm.stalls.filter((w) => w.culprit).length +
    s.healthz.failed
  );
}

/** The summary table, the notes, then every finding with a reproduction. */
export function renderReport(s: Summary): string {
  const failures = distinctFailures(s.sent, s.secrets);
  const l = s.ledger;
  return [
    summaryTable(s),
    ...s.notes.map((x) => `  note: ${x}`),
    ...s.incidents.flatMap((i) => [
      `incident at ${i.atS.toFixed(1)} s: the server ${i.kind === 'hang' ? 'hung' : 'exited'} (${i.detail}); ${i.suspects.length} suspects; ${
        i.culprit ? 'replayed alone, this one did it again:' : `none did it again when replayed alone: ${i.suspects.map((c) => `${c.category} ${c.op.id}: ${c.note.slice(0, 80)}`).join(' | ')}`
      }`,
      ...(i.culprit ? [reproduction(i.culprit, i.kind === 'hang' ? 'none: the server hung' : 'none: the server exited', s.secrets)] : []),
      ...(i.stack ? [`    stuck at: ${i.stack.join(' < ')}`] : []),
    ]),
    ...s.quarantined.map(([pair, skipped]) => `  quarantined after a hang or exit: ${pair} (${skipped} cases skipped)`),
    ...listed('rows leaked', l.rowsLeaked),
    ...listed('credits leaked', grouped(l.creditsLeaked)),
    ...listed('charged while in flight when a hung server was killed (not counted: the hang is)', l.chargedAtKill),
    ...listed('holds left', l.holdsLeft),
    ...listed('books unbalanced', l.booksUnbalanced),
    ...listed("other account's objects changed", s.othersChanged),
    ...listed('Object.prototype', s.prototype),
    ...listed("the gateway's upstream saw", s.upstream),
    ...listed('exits', s.exits),
    ...listed(
      `/healthz stalls outside hangs (polls over ${HEALTHZ_BOUND_MS} ms or failed, merged; longest first)`,
      s.healthzCalm.stalls.map(
        (w) =>
          `${w.ms.toFixed(0)} ms, ${w.polls} polls${w.failed ? ` (${w.failed} unanswered)` : ''}; ${
            w.culprit
              ? `replayed alone, this one stalled /healthz again (${Number.isFinite(w.culprit.ms) ? `${w.culprit.ms.toFixed(0)} ms` : 'no answer'}):\n${reproduction(w.culprit.c, w.culprit.answer, s.secrets)}`
              : `in flight: ${w.inFlight.map((x) => `${x.c.category} ${x.c.op.id}: ${x.c.note.slice(0, 100)}`).slice(0, 8).join(' | ') || 'nothing'}`
          }`,
      ),
    ),
    ...(failures.length ? [`distinct failures: ${failures.length}`, ...failures] : []),
  ].join('\n');
}

/** Entries that differ only in ids and amounts, counted once with an example. */
function grouped(items: readonly string[]): string[] {
  const groups = new Map<string, string[]>();
  for (const item of items) {
    const key = item.replace(/req_[A-Za-z0-9]+/g, 'req_…').replace(/\d+/g, '#');
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return [...groups.values()].map((g) => `${g.length} × ${g[0]}`);
}

function listed(title: string, items: readonly string[]): string[] {
  return items.length ? [`${title}: ${items.length}`, ...items.slice(0, 20).map((i) => `  - ${i}`), ...(items.length > 20 ? [`  … and ${items.length - 20} more`] : [])] : [];
}

const n = (x: number) => x.toLocaleString('en-US');

function statusCounts(sent: readonly Sent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of sent) {
    const label = s.disturbed ? 'lost in a restart' : s.outcome.parserClose ? 'closed (HTTP-level garbage)' : s.outcome.label;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/** The gateway's answers by status, its upstream's refusals (passed through) counted apart. */
function gatewayLine(sent: readonly Sent[]): string {
  const mine = sent.filter((x) => x.c.op.surface === 'gateway');
  const counts = Object.entries(statusCounts(mine)).sort(([a], [b]) => a.localeCompare(b));
  const upstream = mine.filter((x) => x.outcome.upstream).length;
  return mine.length ? `${counts.map(([k, v]) => `${k}: ${n(v)}`).join(', ')} (the upstream's refusals among them: ${n(upstream)})` : 'none sent';
}

function violationCount(sent: readonly Sent[], kinds: readonly string[]): number {
  return sent.filter((s) => !s.disturbed && s.outcome.violations.some((v) => kinds.includes(v.kind))).length;
}

function summaryTable(s: Summary): string {
  const judged = s.sent.filter((x) => !x.disturbed);
  const counts = Object.entries(statusCounts(s.sent)).sort(([a], [b]) => a.localeCompare(b));
  const rows: [string, string][] = [
    ['requests', n(s.sent.length)],
    ['by status', counts.map(([k, v]) => `${k}: ${n(v)}`).join(', ')],
    ['by category (count, mean ms)', categoryLine(s.sent)],
    ['by root', surfaceLine(judged)],
    ['messages root by status', Object.entries(statusCounts(s.sent.filter((x) => x.c.op.surface === 'messages'))).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${n(v)}`).join(', ') || 'none sent'],
    ['gateway by status', gatewayLine(s.sent)],
    ['5xx', n(violationCount(judged, ['5xx']))],
    ['shape violations', n(violationCount(judged, ['shape', 'no-request-id']))],
    ['no answer (well-formed request)', n(violationCount(judged, ['no-answer']))],
    ['timeouts', n(violationCount(judged, ['timeout']))],
    ['accepted but should be refused', `${n(violationCount(judged, ['accepted']))} (of ${n(judged.filter((x) => x.c.expect.refuse || x.c.expect.status).length)} that must be refused)`],
    ['wrong status / code', n(violationCount(judged, ['status', 'code']))],
    ['param mismatches', `${n(violationCount(judged, ['param']))} (of ${n(judged.filter((x) => x.c.expect.param && x.outcome.status !== null && x.outcome.status >= 400).length)} refusals whose param was checked)`],
    ['over the Responses WebSocket', websocketLine(s.sent)],
    ['rows leaked', n(s.ledger.rowsLeaked.length)],
    ['credits leaked', n(s.ledger.creditsLeaked.length)],
    ['holds left', n(s.ledger.holdsLeft.length)],
    ['books unbalanced', n(s.ledger.booksUnbalanced.length)],
    ["other account's objects changed", n(s.othersChanged.length)],
    ['Object.prototype changes', n(s.prototype.length)],
    ['admin API after the run', s.adminAfter.length ? s.adminAfter.join('; ') : 'ok'],
    ["the gateway's upstream", s.upstream.length ? `${n(s.upstream.length)} problems` : 'saw the upstream key, never a caller\'s'],
    ['hangs / exits of the server', `${n(s.incidents.length)} (restarts: ${n(s.exits.length)})`],
    ['/healthz', healthzLine(s.healthz)],
    ['/healthz outside hangs', `${healthzLine(s.healthzCalm)}; stalls: ${n(s.healthzCalm.stalls.length)}`],
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
function distinctFailures(sent: readonly Sent[], secrets: Record<string, string>): string[] {
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

/** Per root (the operation's): requests, 5xx, shape violations. */
function surfaceLine(judged: readonly Sent[]): string {
  return (['v1', 'admin', 'messages', 'gateway'] as const)
    .map((surface) => {
      const of = judged.filter((x) => x.c.op.surface === surface);
      return `${surface} ${n(of.length)} (5xx ${n(violationCount(of, ['5xx']))}, shape ${n(violationCount(of, ['shape', 'no-request-id']))})`;
    })
    .join(', ');
}

/** The POST /v1/responses body cases sent again as messages: how they ended, and what went wrong. */
function websocketLine(sent: readonly Sent[]): string {
  const ws = sent.filter((x) => x.websocket);
  if (!ws.length) return 'none sent';
  const judged = ws.filter((x) => !x.disturbed);
  const labels = Object.entries(statusCounts(ws)).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k.replace(/^ws: /, '')}: ${n(v)}`);
  return `${n(ws.length)} messages (${labels.join(', ')}); server errors: ${n(violationCount(judged, ['5xx']))}, shape violations: ${n(violationCount(judged, ['shape', 'no-request-id']))}, not as the POST: ${n(violationCount(judged, ['accepted', 'status', 'code', 'param']))}, socket unusable after: ${n(violationCount(judged, ['unusable']))}`;
}

const healthzLine = (h: HealthzStats) =>
  `${n(h.samples)} polls (every ${h.everyMs.toFixed(0)} ms), max ${h.maxMs.toFixed(1)} ms, p99 ${h.p99Ms.toFixed(1)} ms, over ${HEALTHZ_BOUND_MS} ms: ${n(h.over)}, failed: ${n(h.failed)}`;
