// The one start-up summary line: where it listens, which engine answers, which database
// holds the state, whether the admin API is on, and whether containers (the code tools)
// can run here, where, or why not. Never a secret: the upstream URL
// without its query, the PostgreSQL URL without user or password.
import type { Config } from '../config.ts';
import type { AdminTokenSource } from '../keys/admin-tokens.ts';
import type { UpstreamConfig } from '../providers/remote/openai-compatible/config.ts';
import type { SandboxStatus } from '../sandbox/types.ts';
import { describePostgres } from './postgres-target.ts';

export function describeEngine(upstream: UpstreamConfig | undefined): string {
  if (!upstream) return 'offline';
  const u = new URL(upstream.baseUrl);
  return `upstream ${u.origin}${u.pathname} (agent: ${upstream.models.agent}, agent-think: ${upstream.models['agent-think']})`;
}

export function describeDatabase(database: Config['database']): string {
  return database.kind === 'sqlite' ? `sqlite ${database.file}` : `postgres ${describePostgres(database.url)}`;
}

/** `storedToo`: a token is stored as well, which the environment's overrides. */
export function describeAdmin(source: AdminTokenSource, storedToo = false): string {
  switch (source) {
    case 'env':
      return `on, admin token: from AGENT_API_ADMIN_TOKEN${storedToo ? ' (the stored token is not used)' : ''}`;
    case 'stored':
      return 'on, admin token: stored (rotate with `node bin/agent-api.js admin-token rotate`)';
    case 'none':
      return 'off (set AGENT_API_ADMIN_TOKEN, or run `node bin/agent-api.js admin-token rotate`)';
  }
}

/** On, with the root the containers live in (and why there, when moved); off, with why and what to do. */
export function describeContainers(status: SandboxStatus): string {
  if (!status.available) return `off (${status.reason ?? 'the sandbox cannot run'})`;
  return status.root ? `on (root ${status.root}${status.note ? `: ${status.note}` : ''})` : 'on';
}

// Speech: which engine reads text aloud, or why it cannot and what to install.
/** `offline (Flite)`, `upstream (<models>)`, or `off (<what to install>)`. */
export function describeSpeech(upstream: UpstreamConfig | undefined, engine: { missing?: string }): string {
  if (upstream?.speech === 'upstream') {
    const mapped = Object.entries(upstream.speechModels).map(([ours, theirs]) => `${ours}: ${theirs}`);
    return `upstream${mapped.length > 0 ? ` (${mapped.join(', ')})` : ''}`;
  }
  return engine.missing ? `off (${engine.missing})` : 'offline (Flite)';
}

/** Transcriptions: the engine that runs them, or off with why and what to install (each request is then a 503 saying the same). */
export function describeTranscription(status: { available: true; describe: string } | { available: false; reason: string }): string {
  return status.available ? status.describe : `off (${status.reason})`;
}

export interface Summary {
  url: string;
  engine: string;
  database: string;
  admin: string;
  containers: string;
  speech?: string;
  /** Transcriptions and translations (describeTranscription). */
  transcription?: string;
}

export const summaryLine = (s: Summary): string =>
  `agent-api serving ${s.url} | engine: ${s.engine} | database: ${s.database} | admin API: ${s.admin} | containers: ${s.containers}` +
  (s.speech ? ` | speech: ${s.speech}` : '') +
  (s.transcription ? ` | transcription: ${s.transcription}` : '');
