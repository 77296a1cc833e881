// Batches (issue 9): one row per batch, and one per line once the line has started, so
// a restart resumes where the batch stopped and runs no line twice.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('input_file_id', 'text', (c) => c.notNull())
    .addColumn('completion_window', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    /** JSON: the validation errors ({code, message, param, line}[]), when it failed */
    .addColumn('errors', 'text')
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    /** micro-credits the lines were charged */
    .addColumn('credits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('metadata', 'text')
    .addColumn('caller_ip', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('finalizing_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('expired_at', 'bigint')
    .addColumn('cancelling_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .execute();
  await db.schema.createIndex('batches_account').on('batches').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('batch_lines')
    .addColumn('batch_id', 'text', (c) => c.notNull().references('batches.id').onDelete('cascade'))
    .addColumn('line_no', 'integer', (c) => c.notNull())
    /** running: started, outcome not yet recorded (a crash then: failed, never run again); done */
    .addColumn('state', 'text', (c) => c.notNull())
    /** JSON: the output line (id, custom_id, response, error) */
    .addColumn('outcome', 'text')
    /** 1: the response was 2xx (output file), 0: error file */
    .addColumn('ok', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('batch_lines_pk', ['batch_id', 'line_no'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('batch_lines').execute();
  await db.schema.dropTable('batches').execute();
}
