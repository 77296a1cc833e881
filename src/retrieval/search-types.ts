// What a vector store search takes and returns, shared by POST /vector_stores/{id}/search
// and the file_search tool of /v1/responses.

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

export type ComparisonFilter = {
  type: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'nin';
  key: string;
  value: string | number | boolean | (string | number)[];
};
export type AttributeFilter = ComparisonFilter | { type: 'and' | 'or'; filters: AttributeFilter[] };

export interface SearchOptions {
  /** One text, or several searched together (their results fused). */
  query: string | string[];
  /** 1 to 50; default 10. */
  maxResults?: number;
  filters?: AttributeFilter | null;
  /** Results scoring below it are dropped (0 to 1). */
  scoreThreshold?: number;
}

/** One passage found, in the shape of the reference's vector store search result. */
export interface SearchResult {
  file_id: string;
  filename: string;
  /** 0 to 1, higher is better. */
  score: number;
  attributes: Attributes | null;
  content: { type: 'text'; text: string }[];
}

/** A named store as the account sees it: searchable, or kept only to say it expired. */
export type StoreState = 'active' | 'expired';

/** Searches the named vector stores of an account (unknown or other accounts' ids find nothing). */
export interface VectorSearch {
  search(accountId: string, vectorStoreIds: readonly string[], options: SearchOptions, signal?: AbortSignal): Promise<SearchResult[]>;
  /**
   * The state of each named store of the account; an id missing from the map is not the
   * account's (unknown or another account's: the two look the same). Callers refuse a
   * request naming one before any model runs.
   */
  storeStates(accountId: string, vectorStoreIds: readonly string[]): Promise<Map<string, StoreState>>;
}
