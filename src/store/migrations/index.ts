// The one migration set, applied at start on SQLite and PostgreSQL alike.
import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_core.ts';

const migrations: Record<string, Migration> = {
  '0001_core': m0001,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
