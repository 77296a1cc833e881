// Database errors a handler answers in the caller's terms rather than as a 500, on
// either engine: a row a statement refers to was deleted by another request meanwhile.

/** A foreign key violation: PostgreSQL's 23503, SQLite's SQLITE_CONSTRAINT_FOREIGNKEY. */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** A unique or primary key violation: PostgreSQL's 23505, SQLite's SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
