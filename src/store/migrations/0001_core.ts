// Accounts, keys, usage counters, credit transactions and the activity log.
// Migrations take Kysely<any> so they stay frozen in time; the types used here work
// on both SQLite and PostgreSQL (bigint is INTEGER affinity in SQLite).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('reserved', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('credit_transactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credit_transactions_account').on('credit_transactions').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_hint', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('models', 'text')
    .addColumn('ip_allowlist', 'text')
    .addColumn('rpm', 'integer')
    .addColumn('limits', 'text', (c) => c.notNull())
    .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revoked_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('key_usage')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('credits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('spend', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('key_usage_pk', ['key_id', 'period', 'period_start'])
    .execute();

  await db.schema
    .createTable('activity')
    // One row per request: the request id is the key (and sorts by time).
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('account_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('model', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('client_request_id', 'text')
    .addColumn('end_user', 'text')
    .addColumn('safety_identifier', 'text')
    .addColumn('input_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('credits_reserved', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('credits_settled', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_usd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('latency_ms', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Few indexes: every one is written on every request.
  await db.schema.createIndex('activity_key').on('activity').columns(['key_id', 'request_id']).execute();
  await db.schema.createIndex('activity_account').on('activity').columns(['account_id', 'request_id']).execute();
  await db.schema
    .createIndex('activity_client_request')
    .on('activity')
    .column('client_request_id')
    .where(sql.ref('client_request_id'), 'is not', null)
    .execute();

  await db.schema
    .createTable('meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['meta', 'activity', 'key_usage', 'api_keys', 'credit_transactions', 'accounts']) {
    await db.schema.dropTable(t).execute();
  }
}
