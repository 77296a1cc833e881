// The one migration set, applied at start on SQLite and PostgreSQL alike.
import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_core.ts';
import * as m0002 from './0002_chat_completions.ts';
import * as m0003 from './0003_credit_reservations.ts';
import * as m0004 from './0004_drop_reservation_account_index.ts';
import * as m0005 from './0005_credit_holds.ts';
import * as m0006 from './0006_ledger_functions.ts';
import * as m0007 from './0007_key_max_output_tokens.ts';
import * as m0008 from './0008_hold_instance.ts';
import * as m0009 from './0009_admin_tokens.ts';
import * as m0010 from './0010_jobs.ts';
import * as m0011 from './0011_files.ts';
import * as m0012 from './0012_hold_leases.ts';
import * as m0013 from './0013_batches.ts';
import * as m0014 from './0014_responses.ts';
import * as m0015 from './0015_conversations.ts';
import * as m0016 from './0016_vector_stores.ts';
import * as m0017 from './0017_containers.ts';
import * as m0018 from './0018_skills.ts';
import * as m0019 from './0019_container_blobs.ts';
import * as m0020 from './0020_ledger_activity.ts';
import * as m0021 from './0021_ledger_runs.ts';
import * as m0022 from './0022_mcp_approvals.ts';
import * as m0023 from './0023_activity_moderation.ts';
import * as m0024 from './0024_message_batches.ts';
import * as m0025 from './0025_activity_gateway.ts';
import * as m0026 from './0026_response_events.ts';
import * as m0027 from './0027_ledger_settle_async_commit.ts';

const migrations: Record<string, Migration> = {
  '0001_core': m0001,
  '0002_chat_completions': m0002,
  '0003_credit_reservations': m0003,
  '0004_drop_reservation_account_index': m0004,
  '0005_credit_holds': m0005,
  '0006_ledger_functions': m0006,
  '0007_key_max_output_tokens': m0007,
  '0008_hold_instance': m0008,
  '0009_admin_tokens': m0009,
  '0010_jobs': m0010,
  '0011_files': m0011,
  '0012_hold_leases': m0012,
  '0013_batches': m0013,
  '0014_responses': m0014,
  '0015_conversations': m0015,
  '0016_vector_stores': m0016,
  '0017_containers': m0017,
  '0018_skills': m0018,
  '0019_container_blobs': m0019,
  '0020_ledger_activity': m0020,
  '0021_ledger_runs': m0021,
  '0022_mcp_approvals': m0022,
  '0023_activity_moderation': m0023,
  '0024_message_batches': m0024,
  '0025_activity_gateway': m0025,
  '0026_response_events': m0026,
  '0027_ledger_settle_async_commit': m0027,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
