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
    ...(id === 'agent-embed' ? { alias_of: 'text-embedding-3-small' } : {}),
    ...(id === 'agent-embed-large' ? { alias_of: 'text-embedding-3-large' } : {}),
  })),
  ...SPEECH_MODELS.map((id) => ({ id, group: 'speech' as const })),
  ...TRANSCRIPTION_MODELS.map((id) => ({ id, group: 'transcription' as const })),
  ...MODERATION_MODELS.map((id) => ({ id, group: 'moderation' as const })),
  ...DECISION_MODELS.map((id) => ({ id, group: 'decisions' as const })),
];

const byId = new Map(MODELS.map((m) => [m.id, m]));
export function findModel(id: string): ModelInfo | undefined {
  return byId.get(id);
}
