// The list envelope and its cursor options, shared by the families that page their
// objects by id (SPEC "list envelopes": `object: list`, `data`, `first_id`, `last_id`,
// `has_more`).

export interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface PageOptions {
  /** 1 to 100 (the contract checks it). */
  limit?: number;
  /** The last id of the previous page. */
  after?: string;
  /** The first id of the next page (lists that take it). */
  before?: string;
  order?: 'asc' | 'desc';
}

/** A list query's cursor options (the contract has checked them; absent ones stay absent). */
export function pageOptions(query: Record<string, unknown>): PageOptions {
  return {
    ...(typeof query.limit === 'number' ? { limit: query.limit } : {}),
    ...(typeof query.after === 'string' ? { after: query.after } : {}),
    ...(typeof query.before === 'string' ? { before: query.before } : {}),
    ...(query.order === 'asc' || query.order === 'desc' ? { order: query.order } : {}),
  };
}

/** The list envelope of one page. */
export function listPage<T extends { id?: unknown }>(data: T[], hasMore: boolean): ListPage<T> {
  return { object: 'list', data, first_id: (data[0]?.id as string | undefined) ?? null, last_id: (data.at(-1)?.id as string | undefined) ?? null, has_more: hasMore };
}
