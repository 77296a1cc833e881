// The one time the first start's secrets are shown: a framed block on stderr (stdout
// carries the JSON log lines), with `API key: ` and `Admin token: ` lines a script can grep.
import type { FirstRun } from './first-run.ts';

/** The banner, or undefined when this start created no secret. */
export function firstRunBanner(run: FirstRun, origin: string): string | undefined {
  if (!run.apiKey && !run.adminToken) return undefined;
  const lines = ['agent-api: first start. Save these now: they are shown only this once.', ''];
  const account = run.account ? `account "${run.account.name}" (${run.account.credits} credits)` : 'account "default"';
  if (run.apiKey) lines.push(`API key: ${run.apiKey}`, `    ${account}, every switch on but Moderate requests`);
  else lines.push(`The key in AGENT_API_BOOTSTRAP_KEY: ${account}, every switch on but Moderate requests`);
  if (run.adminToken) {
    lines.push(`Admin token: ${run.adminToken}`, '    for /admin/v1, stored hashed; a new one: node bin/agent-api.js admin-token rotate');
  }
  lines.push('', `Base URL: ${origin}/v1`);
  const rule = '='.repeat(Math.min(100, Math.max(...lines.map((l) => l.length)) + 2));
  return [rule, ...lines.map((l) => (l ? ` ${l}` : '')), rule, ''].join('\n');
}
