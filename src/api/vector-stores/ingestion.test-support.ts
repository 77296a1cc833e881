// Waiting for ingestion in tests: polls through the API (bounded) until no file of a
// store, or one file, is in progress.
import type OpenAI from 'openai';

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
