// Where a postgres:// URL points, for start-up lines and errors: host, port and database,
// never the user's password.
export interface PostgresTarget {
  host: string;
  port: string;
  database: string;
}

export function postgresTarget(url: string): PostgresTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { host: 'unknown host', port: '5432', database: '' };
  }
  // The host may also come as a query parameter (a Unix socket directory).
  const host = u.searchParams.get('host') ?? (decodeURIComponent(u.hostname) || 'localhost');
  const port = u.port || u.searchParams.get('port') || '5432';
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
  return { host, port, database };
}

export const describePostgres = (url: string): string => {
  const t = postgresTarget(url);
  return `${t.host}:${t.port}/${t.database}`;
};
