// Object.prototype in the server under test, through the child's /__fuzz/probe route.
// Prototype attacks pollute under a name of their own (fzp<number>), so a change the
// probe reports names the case that made it.
import { reproduction } from './report.ts';
import type { Sent } from './runner.ts';

interface Probe {
  added: string[];
  removed: string[];
  changed: string[];
  inherited: string[];
}

export class PrototypeWatch {
  private readonly seen: { afterRequests: number; probe: Probe }[] = [];

  constructor(private readonly origin: () => string) {}

  /** Asks the server; true when Object.prototype is not as it started. */
  async probe(afterRequests: number): Promise<boolean> {
    try {
      const res = await fetch(`${this.origin()}/__fuzz/probe`, { signal: AbortSignal.timeout(5_000) });
      const p = (await res.json()) as Probe;
      this.seen.push({ afterRequests, probe: p });
      return p.added.length + p.removed.length + p.changed.length + p.inherited.length > 0;
    } catch {
      return false; // a hung or restarting server: the runner deals with it
    }
  }

  /** Every change the probes saw, with the case that made it where its marker names one. */
  findings(sent: readonly Sent[], secrets: Record<string, string>): string[] {
    const changes = new Map<string, { how: Set<string>; after: number }>();
    for (const { afterRequests, probe } of this.seen) {
      const found: [string, string][] = [
        ...probe.added.map((a): [string, string] => [a, 'added']),
        ...probe.removed.map((r): [string, string] => [r, 'removed']),
        ...probe.changed.map((c): [string, string] => [c, 'replaced']),
        ...probe.inherited.map((i): [string, string] => [i, 'inherited by every object']),
      ];
      for (const [name, how] of found) {
        const entry = changes.get(name) ?? { how: new Set<string>(), after: afterRequests };
        entry.how.add(how);
        changes.set(name, entry);
      }
    }
    return [...changes.entries()].map(([name, { how, after }]) => {
      const culprit = /^fzp\d+$/.test(name) ? sent.find((s) => new RegExp(`${name}(?!\\d)`).test(s.c.note)) : undefined;
      return `Object.prototype.${name}: ${[...how].join(', ')} (seen after ${after} requests)${culprit ? `\n${reproduction(culprit.c, culprit.outcome.preview, secrets)}` : ''}`;
    });
  }
}
