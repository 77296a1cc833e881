// Start-up failures a user can fix, as one line naming what to change: the port, the
// data directory, the database, the configuration. main.ts prints the line and exits 1;
// anything not recognised here is printed as one line too, its stack only at LOG_LEVEL=debug.
import type { Config } from '../config.ts';
import { ConfigError } from '../config.ts';
import { postgresTarget } from './postgres-target.ts';

export class StartupError extends Error {
  override name = 'StartupError';
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'part of the path is a file',
  EEXIST: 'it exists and is not a directory',
  ENOSPC: 'no space left on device',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
};
const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** The error's code, looking through causes and the AggregateError of a multi-address connect. */
export function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const o = e as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof o.code === 'string') return o.code;
    if (Array.isArray(o.errors) && o.errors.length > 0) return errorCode(o.errors[0]);
    e = o.cause;
  }
  return undefined;
}

export const reasonOf = (err: unknown): string => {
  const code = errorCode(err);
  return (code && REASONS[code]) ?? (err instanceof Error ? err.message : String(err));
};

export function listenError(err: unknown, config: Pick<Config, 'host' | 'port'>): StartupError | undefined {
  switch (errorCode(err)) {
    case 'EADDRINUSE':
      return new StartupError(`PORT ${config.port} is already in use on ${config.host} (set PORT to another port)`);
    case 'EACCES':
      return new StartupError(`PORT ${config.port} needs privileges this process does not have (set PORT to 1024 or above)`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`HOST ${config.host} is not an address of this machine (set HOST, e.g. 127.0.0.1 or 0.0.0.0)`);
    default:
      return undefined;
  }
}

export function databaseError(err: unknown, database: Config['database']): StartupError | undefined {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (database.kind === 'postgres') {
    const { host, port, database: name } = postgresTarget(database.url);
    const at = `PostgreSQL at ${host}:${port}`;
    if (code && NETWORK.has(code)) return new StartupError(`cannot reach ${at}: ${REASONS[code]} (check DATABASE_URL and that the server is running)`);
    if (/timeout/i.test(message)) return new StartupError(`cannot reach ${at}: no answer in time (check DATABASE_URL and that the server is running)`);
    // SQLSTATE class 28: invalid authorization; pg's message names the user, never the password.
    if (code?.startsWith('28')) return new StartupError(`${at} refused the login: ${message} (check the user and password in DATABASE_URL)`);
    if (code === '3D000') return new StartupError(`${at} has no database "${name}" (create it, or fix DATABASE_URL)`);
    if (/SSL/i.test(message)) return new StartupError(`${at}: ${message} (check sslmode in DATABASE_URL)`);
    if (code && /^[0-9A-Z]{5}$/.test(code)) return new StartupError(`${at}: ${message}`);
    return undefined;
  }
  if (code?.startsWith('SQLITE_')) {
    if (code === 'SQLITE_NOTADB') return new StartupError(`${database.file} is not a SQLite database (move it away, or set DATA_DIR elsewhere)`);
    if (code.startsWith('SQLITE_READONLY')) return new StartupError(`the SQLite database ${database.file} is read-only (make it writable, or set DATA_DIR elsewhere)`);
    return new StartupError(`cannot open the SQLite database ${database.file}: ${message}`);
  }
  return undefined;
}

/** The line printed for a failed start. */
export function startupErrorLine(err: unknown, showStack: boolean): string {
  if (err instanceof StartupError || err instanceof ConfigError) return `agent-api: ${err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  if (showStack && err instanceof Error && err.stack) return `agent-api: failed to start: ${err.stack}`;
  return `agent-api: failed to start: ${message.split('\n')[0]} (LOG_LEVEL=debug shows the stack)`;
}
