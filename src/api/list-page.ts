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
