// Engines by capability: each engine registers for what it does (chat, embeddings,
// moderation, decisions, speech; next transcription, images) and for which of our model ids, with the
// price of each, and a call finds its engine by capability and model id. Configuration
// decides who registers (providers/index.ts): the offline engines by default, an
// upstream where one is configured for that capability; a model id can have its own.
import { CHAT_MODELS, DECISION_MODELS, EMBEDDING_MODEL_SPECS, EMBEDDING_MODELS, MODERATION_MODELS, SPEECH_MODELS, TRANSCRIPTION_MODELS } from '../contract/models.ts';
import type { Price } from '../credits/pricing.ts';
import type { ChatProvider, DecisionProvider, EmbeddingProvider, ImageProvider, ModerationProvider, SpeechProvider, TranscriptionProvider } from './types.ts';

/** The one id the image engine registers under (api/images/ asks for it). */
export const IMAGE_ENGINE = 'images';

/** What each capability's engine is. A capability joins here with its interface. */
export interface EngineKinds {
  chat: ChatProvider;
  embeddings: EmbeddingProvider;
  moderation: ModerationProvider;
  decisions: DecisionProvider;
  /** Its price's `inputPerMTok` is per million input characters (speech is paid on characters, as the reference's tts-1). */
  speech: SpeechProvider;
  /** Transcriptions and translations (one engine does both). */
  transcription: TranscriptionProvider;
  images: ImageProvider;
}
export type Capability = keyof EngineKinds;

/** Our model ids by capability: every one must have an engine before the service serves. */
export const MODELS_BY_CAPABILITY: { readonly [C in Capability]: readonly string[] } = {
  chat: CHAT_MODELS,
  embeddings: EMBEDDING_MODELS,
  moderation: MODERATION_MODELS,
  decisions: DECISION_MODELS,
  speech: SPEECH_MODELS,
  transcription: TRANSCRIPTION_MODELS,
  // Images name no selectable model (`model` is without effect): one engine, under this id.
  images: [IMAGE_ENGINE],
};

interface Entry<C extends Capability> {
  engine: EngineKinds[C];
  price: Price;
}

export class Engines {
  private readonly table = new Map<Capability, Map<string, Entry<Capability>>>();

  /** `engine` serves `models` for `capability`, at `price(model)` (a later registration of a model replaces the earlier). */
  register<C extends Capability>(capability: C, models: readonly string[], engine: EngineKinds[C], price: (model: string) => Price): this {
    let byModel = this.table.get(capability);
    if (!byModel) this.table.set(capability, (byModel = new Map()));
    for (const model of models) byModel.set(model, { engine, price: price(model) });
    return this;
  }

  private entry<C extends Capability>(capability: C, model: string): Entry<C> {
    const entry = this.table.get(capability)?.get(model);
    // The contract lets only our model ids through, and check() makes sure each has an engine.
    if (!entry) throw new Error(`no ${capability} engine serves the model ${model}`);
    return entry as Entry<C>;
  }

  /** The engine serving `model` for `capability`. */
  for<C extends Capability>(capability: C, model: string): EngineKinds[C] {
    return this.entry(capability, model).engine;
  }

  /** What `model` costs where it runs (USD per million tokens). */
  price(capability: Capability, model: string): Price {
    return this.entry(capability, model).price;
  }

  /** Every model id of every capability has an engine (start-up stops otherwise). */
  check(): this {
    for (const [capability, models] of Object.entries(MODELS_BY_CAPABILITY) as [Capability, readonly string[]][]) {
      const missing = models.filter((m) => !this.table.get(capability)?.has(m));
      if (missing.length > 0) throw new Error(`no ${capability} engine for ${missing.join(', ')}`);
    }
    return this;
  }

  /** Each registered engine once (to close them at shutdown). */
  all(): unknown[] {
    return [...new Set([...this.table.values()].flatMap((byModel) => [...byModel.values()].map((e) => e.engine)))];
  }
}

/** An embedding model id's price: what the model it runs costs. */
export const embeddingPrice = (prices: Readonly<Record<string, number>>) => (model: string) => ({
  inputPerMTok: prices[EMBEDDING_MODEL_SPECS[model as keyof typeof EMBEDDING_MODEL_SPECS].runs] ?? 0,
  outputPerMTok: 0,
});

/**
 * A transcription model's price: audio is paid per minute, and a Run reserves and settles
 * in Price units, so a transcription's "input tokens" are seconds of audio and this is
 * USD per million seconds.
 */
export const transcriptionPrice = (usdPerMinute: number): Price => ({ inputPerMTok: (usdPerMinute / 60) * 1_000_000, outputPerMTok: 0 });
