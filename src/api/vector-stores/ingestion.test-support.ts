// The vector store tests' server and clients, and waiting for ingestion: polls through
// the API (bounded) until no file of a store, or one file, is in progress.
import type OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

/** A test server whose job runner looks for ingestion jobs every 20 ms. */
export function startFileSearchServer(): Promise<TestServer> {
  return startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
}

/** An openai client on a new key (of a new account) with the files and file_search switches. */
export async function fileSearchClient(server: TestServer): Promise<OpenAI> {
  return server.openai((await server.createKey({ permissions: { file_search: true, files: true } })).key);
}

const POLL_MS = 25;
const POLLS = 800;

export async function settled(client: OpenAI, storeId: string): Promise<OpenAI.VectorStores.VectorStore> {
  for (let i = 0; i < POLLS; i++) {
    const store = await client.vectorStores.retrieve(storeId);
    if (store.file_counts.in_progress === 0) return store;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`ingestion into ${storeId} did not finish`);
}

export async function fileSettled(client: OpenAI, storeId: string, fileId: string): Promise<OpenAI.VectorStores.VectorStoreFile> {
  for (let i = 0; i < POLLS; i++) {
    const file = await client.vectorStores.files.retrieve(fileId, { vector_store_id: storeId });
    if (file.status !== 'in_progress') return file;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`ingestion of ${fileId} did not finish`);
}
