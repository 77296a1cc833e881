// Audio endpoints (SPEC "Audio"; Limits: speech input 4096 characters, speed 0.25 to 4, upload 25 MB,
// transcription temperature 0 to 1).
import { z } from 'zod';
import { applied, binaryContentSchema, fileUpload, limited, MB, modelField, refused, svcSchema } from '../fields.ts';
import { SPEECH_MODELS, TRANSCRIPTION_MODELS } from '../models.ts';
import { defineEndpoint } from '../types.ts';

const REFERENCE_VOICES = [
  'alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar',
] as const;
const OWN_VOICES = ['eve', 'ara', 'rex', 'sal', 'leo'] as const;

// SPEC: translations take the Whisper and GPT-4o transcription models.
const TRANSLATION_MODELS = TRANSCRIPTION_MODELS.filter((id) => id.startsWith('whisper') || id.startsWith('gpt-4o'));

const AUDIO_FILE_NOTE = 'flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav or webm, up to 25 MB';
// Multipart form values arrive as text: a decimal number's text (an empty or blank value is
// not 0, as z.coerce would make it), or a number from a JSON batch line.
const NUMBER_TEXT = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;
const temperatureSchema = z.preprocess((v) => (typeof v === 'string' && NUMBER_TEXT.test(v) ? Number(v) : v), z.number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a number' : undefined) }).min(0).max(1));

// --- Responses ------------------------------------------------------------

const transcriptionSegmentSchema = z
  .looseObject({
    id: z.number().int(),
    seek: z.number(),
    start: z.number(),
    end: z.number(),
    text: z.string(),
    tokens: z.array(z.number().int()),
    temperature: z.number(),
    avg_logprob: z.number(),
    compression_ratio: z.number(),
    no_speech_prob: z.number(),
  })
  .meta({ id: 'TranscriptionSegment' });

const transcriptionWordSchema = z
  .looseObject({ word: z.string(), start: z.number(), end: z.number() })
  .meta({ id: 'TranscriptionWord' });

const durationUsageSchema = z.looseObject({ type: z.literal('duration'), seconds: z.number() });
const tokenUsageSchema = z.looseObject({
  type: z.literal('tokens'),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

export const transcriptionSchema = z
  .looseObject({
    text: z.string(),
    logprobs: z.array(z.looseObject({ token: z.string(), logprob: z.number(), bytes: z.array(z.number()) })).optional(),
    usage: z.union([tokenUsageSchema, durationUsageSchema]).optional(),
    svc: svcSchema,
  })
  .meta({ id: 'CreateTranscriptionResponseJson' });

export const transcriptionVerboseSchema = z
  .looseObject({
    task: z.literal('transcribe').optional(),
    language: z.string(),
    duration: z.number(),
    text: z.string(),
    segments: z.array(transcriptionSegmentSchema).optional(),
    words: z.array(transcriptionWordSchema).optional(),
    usage: durationUsageSchema.optional(),
    svc: svcSchema,
  })
  .meta({ id: 'CreateTranscriptionResponseVerboseJson' });

export const translationSchema = z.looseObject({ text: z.string(), svc: svcSchema }).meta({ id: 'CreateTranslationResponseJson' });

export const translationVerboseSchema = z
  .looseObject({
    task: z.literal('translate').optional(),
    language: z.string(),
    duration: z.number(),
    text: z.string(),
    segments: z.array(transcriptionSegmentSchema).optional(),
    svc: svcSchema,
  })
  .meta({ id: 'CreateTranslationResponseVerboseJson' });

const TEXT_FORMATS = 'text, srt and vtt answer text/plain, with the credits used in the X-Service-Svc header';

// What the offline engine is (providers/inline/transcription/), said plainly wherever the endpoints are published.
const OFFLINE_STT_NOTES = [
  'Offline engine (the default): PocketSphinx en-US after ffmpeg decoding; English only (another language is a 400 naming language); measured here about 35% word error rate on read speech, against about 5 to 8% for the smallest Whisper model. For real use configure an upstream (UPSTREAM_TRANSCRIPTION=upstream: OpenAI, LocalAI, a speaches/faster-whisper server, vLLM).',
  'Charged per started second of audio at the model price per minute (TRANSCRIPTION_PRICE_PER_MINUTE, default $0.006), reserved once the upload is decoded and before recognition; audio up to 2 hours.',
  'The file format is judged by content (ffmpeg probes it); a file that is not audio is a 400 naming file.',
];

// --- Endpoints ------------------------------------------------------------

export const createSpeech = defineEndpoint({
  operationId: 'createSpeech',
  method: 'POST',
  path: '/audio/speech',
  family: 'audio',
  summary: 'Reads text aloud; the body is the audio file.',
  permission: 'audio',
  body: {
    type: 'json',
    // `voice` may be left out: it defaults to eve.
    required: ['model', 'input'],
    fields: {
      model: modelField(SPEECH_MODELS),
      input: applied(z.string().min(1).max(4096, 'input is at most 4096 characters'), 'up to 4096 characters'),
      voice: applied(
        z.enum([...REFERENCE_VOICES, ...OWN_VOICES]),
        'a reference voice name or eve, ara, rex, sal, leo (default eve); custom voice objects are not offered',
      ),
      // SPEC: mp3, wav and pcm; the reference's opus, aac and flac are refused like an unsupported field.
      response_format: limited(['mp3', 'wav', 'pcm'], 'mp3, wav or pcm (24 kHz 16-bit little-endian mono); default mp3'),
      speed: applied(z.number().min(0.25).max(4).default(1), '0.25 to 4 (default 1)'),
      stream_format: limited(['audio'], 'one audio file, not events'),
      instructions: refused('voice instructions are not offered'),
    },
  },
  response: {
    schema: binaryContentSchema,
    alternate: 'binary',
    contentType: 'audio/mpeg',
    description: 'the audio: audio/mpeg for mp3, audio/wav for wav, audio/pcm for pcm',
  },
  billable: true,
  notes: ['input up to 4096 characters', 'agent-voice defaults to the voice eve', 'the credits come in the X-Service-Svc response header (the body is the audio)'],
});

export const createTranscription = defineEndpoint({
  operationId: 'createTranscription',
  method: 'POST',
  path: '/audio/transcriptions',
  family: 'audio',
  summary: 'Transcribes an audio file into text in its own language.',
  permission: 'audio',
  body: {
    type: 'multipart',
    required: ['file', 'model'],
    fields: {
      file: fileUpload(AUDIO_FILE_NOTE, { maxBytes: 25 * MB }),
      model: modelField(TRANSCRIPTION_MODELS),
      language: applied(z.string().regex(/^[a-z]{2}$/i, 'language is an ISO-639-1 code such as en'), 'ISO-639-1 code of the audio'),
      prompt: applied(z.string(), 'guides style or continues a previous segment (an upstream engine; the offline engine does not use it)'),
      response_format: applied(z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt']).default('json'), `default json; ${TEXT_FORMATS}`),
      temperature: applied(temperatureSchema, '0 to 1 (an upstream engine; the offline engine is deterministic and reports it in segments)'),
      timestamp_granularities: applied(
        z.union([z.enum(['word', 'segment']), z.array(z.enum(['word', 'segment'])).min(1)]),
        'word and/or segment (repeat the form field `timestamp_granularities[]`); both give words and segments; with response_format verbose_json (default segment)',
      ),
      stream: limited(['false'], 'the transcription comes back whole, not as events'),
      chunking_strategy: refused('chunking and voice activity detection settings are not offered'),
      include: refused('token log probabilities of transcriptions are not offered'),
      known_speaker_names: refused('speaker diarization is not offered'),
      known_speaker_references: refused('speaker diarization is not offered'),
      languages: refused('several candidate languages are not offered; send one `language`'),
      keywords: refused('keyword guidance is not offered; put the words in `prompt`'),
    },
  },
  response: {
    schema: z.union([transcriptionSchema, transcriptionVerboseSchema]),
    description: `json answers {text}; verbose_json adds language, duration, segments and words; ${TEXT_FORMATS}`,
  },
  billable: true,
  notes: ['audio upload up to 25 MB', 'temperature is 0 to 1', ...OFFLINE_STT_NOTES],
});

export const createTranslation = defineEndpoint({
  operationId: 'createTranslation',
  method: 'POST',
  path: '/audio/translations',
  family: 'audio',
  summary: 'Translates speech in an audio file into English text.',
  permission: 'audio',
  body: {
    type: 'multipart',
    required: ['file', 'model'],
    fields: {
      file: fileUpload(AUDIO_FILE_NOTE, { maxBytes: 25 * MB }),
      model: modelField(TRANSLATION_MODELS, 'Whisper and GPT-4o transcription models'),
      prompt: applied(z.string(), 'guides style; should be in English (an upstream engine; the offline engine does not use it)'),
      response_format: applied(z.enum(['json', 'text', 'verbose_json']).default('json'), 'json, text or verbose_json (default json); text answers text/plain, with the credits used in the X-Service-Svc header'),
      temperature: applied(temperatureSchema, '0 to 1 (an upstream engine; the offline engine is deterministic and reports it in segments)'),
    },
  },
  response: {
    schema: z.union([translationSchema, translationVerboseSchema]),
    description: 'json answers {text}; verbose_json adds language, duration and segments; text answers text/plain',
  },
  billable: true,
  notes: ['audio upload up to 25 MB', 'temperature is 0 to 1', 'offline: English audio passes through as its transcription', ...OFFLINE_STT_NOTES],
});

export const audioEndpoints = [createSpeech, createTranscription, createTranslation];
