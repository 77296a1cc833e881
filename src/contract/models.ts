// Model ids of SPEC "Models". GET /models/{model} answers each of these.
export const CHAT_MODELS = ['agent', 'agent-think'] as const;
export type ChatModel = (typeof CHAT_MODELS)[number];

export const EMBEDDING_MODELS = [
  'agent-embed',
  'agent-embed-large',
  'text-embedding-3-small',
  'text-embedding-3-large',
  'text-embedding-ada-002',
] as const;
export type EmbeddingModel = (typeof EMBEDDING_MODELS)[number];

/** What an embedding model id runs: the model (an alias's target), its vector size, whether `dimensions` may shorten it. */
export interface EmbeddingModelSpec {
  readonly runs: 'text-embedding-3-small' | 'text-embedding-3-large' | 'text-embedding-ada-002';
  readonly dimensions: number;
  readonly shortens: boolean;
}

const SMALL = { runs: 'text-embedding-3-small', dimensions: 1536, shortens: true } as const;
const LARGE = { runs: 'text-embedding-3-large', dimensions: 3072, shortens: true } as const;
export const EMBEDDING_MODEL_SPECS: Readonly<Record<EmbeddingModel, EmbeddingModelSpec>> = {
  'agent-embed': SMALL,
  'agent-embed-large': LARGE,
  'text-embedding-3-small': SMALL,
  'text-embedding-3-large': LARGE,
  'text-embedding-ada-002': { runs: 'text-embedding-ada-002', dimensions: 1536, shortens: false },
};

export const SPEECH_MODELS = ['agent-voice', 'tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-tts'] as const;
export const TRANSCRIPTION_MODELS = [
  'agent-transcribe',
  'whisper-1',
  'gpt-4o-transcribe',
  'gpt-4o-mini-transcribe',
  'whisper-large-v3',
  'whisper-large-v3-turbo',
] as const;
export const MODERATION_MODELS = [
  'agent-moderation',
  'omni-moderation-latest',
  'omni-moderation-2024-09-26',
  'text-moderation-latest',
  'text-moderation-stable',
] as const;
export const DECISION_MODELS = ['typesafe/jev-1.14', '~typesafe/jev-latest', 'gpt-6-luna'] as const;

export interface ModelInfo {
  readonly id: string;
  readonly group: 'chat' | 'embeddings' | 'speech' | 'transcription' | 'moderation' | 'decisions';
  /** An alias answers as itself but runs the model it names. */
  readonly alias_of?: string;
}

export const MODELS: readonly ModelInfo[] = [
  ...CHAT_MODELS.map((id) => ({ id, group: 'chat' as const })),
  ...EMBEDDING_MODELS.map((id) => ({
    id,
    group: 'embeddings' as const,
    ...(EMBEDDING_MODEL_SPECS[id].runs !== id ? { alias_of: EMBEDDING_MODEL_SPECS[id].runs } : {}),
  })),
  ...SPEECH_MODELS.map((id) => ({ id, group: 'speech' as const })),
  ...TRANSCRIPTION_MODELS.map((id) => ({ id, group: 'transcription' as const })),
  ...MODERATION_MODELS.map((id) => ({ id, group: 'moderation' as const })),
  ...DECISION_MODELS.map((id) => ({ id, group: 'decisions' as const })),
];

/** Every model id, in the table's order (what a key's `models` may name). */
export const MODEL_IDS = MODELS.map((m) => m.id) as [string, ...string[]];

const byId = new Map(MODELS.map((m) => [m.id, m]));
export function findModel(id: string): ModelInfo | undefined {
  return byId.get(id);
}
