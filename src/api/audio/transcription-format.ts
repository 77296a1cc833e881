// What a transcription or translation answers, from the segments an engine heard, in
// every response_format: json ({text, usage}), verbose_json (task, language, duration,
// text, every TranscriptionSegment field, words on request), text, srt and vtt. Segment
// and word times are the recognizer's (seconds, 10 ms frames); each word lies inside its
// segment, and cues rise.
import { deflateRawSync } from 'node:zlib';
import type { RecognizedSegment, TranscriptionRequest } from '../../providers/types.ts';
import { encodeText } from '../../text/tokenizer.ts';

const round = (x: number, places = 3) => Math.round(x * 10 ** places) / 10 ** places;

/** A segment's words as text: the recognizer's lower-case words, the first capitalized, ending with a full stop. */
export function segmentText(segment: RecognizedSegment): string {
  const text = segment.words.map((w) => w.word).join(' ');
  return text ? `${text[0]!.toUpperCase()}${text.slice(1)}.` : '';
}

/** Whisper's compression ratio: UTF-8 bytes over their deflated bytes (repetitive text compresses well). */
function compressionRatio(text: string): number {
  const bytes = Buffer.from(text);
  if (bytes.length === 0) return 0;
  return round(bytes.length / deflateRawSync(bytes).length, 4);
}

/** A segment's mean log probability, from the words' posteriors. */
function avgLogprob(segment: RecognizedSegment): number {
  const n = segment.words.length;
  if (n === 0) return 0;
  return round(segment.words.reduce((s, w) => s + Math.log(Math.max(w.confidence, 1e-6)), 0) / n, 4);
}

export interface Transcript {
  text: string;
  segments: {
    id: number;
    seek: number;
    start: number;
    end: number;
    text: string;
    tokens: number[];
    temperature: number;
    avg_logprob: number;
    compression_ratio: number;
    no_speech_prob: number;
  }[];
  words: { word: string; start: number; end: number }[];
}

/** Segments built between turns of the event loop (a long transcript's tokens and deflates never hold it long). */
const SEGMENTS_PER_TURN = 32;

export async function transcriptOf(segments: readonly RecognizedSegment[], temperature: number): Promise<Transcript> {
  const texts = segments.map(segmentText);
  const built: Transcript['segments'] = [];
  for (let id = 0; id < segments.length; id++) {
    if (id > 0 && id % SEGMENTS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const s = segments[id]!;
    built.push({
      id,
      // Whisper's seek is where its 30 s window started, in 10 ms frames; here, the segment's own start.
      seek: Math.round(s.start * 100),
      start: round(s.start),
      end: round(s.end),
      text: ` ${texts[id]}`,
      tokens: encodeText(` ${texts[id]}`),
      temperature,
      avg_logprob: avgLogprob(s),
      compression_ratio: compressionRatio(texts[id]!),
      // PocketSphinx gives no speech/non-speech probability: its segments hold words, so 0.
      no_speech_prob: 0,
    });
  }
  return {
    text: texts.filter(Boolean).join(' '),
    segments: built,
    words: segments.flatMap((s) => s.words.map((w) => ({ word: w.word, start: round(w.start), end: round(w.end) }))),
  };
}

function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

export function srtOf(t: Transcript): string {
  return t.segments.map((s, i) => `${i + 1}\n${clock(s.start, ',')} --> ${clock(s.end, ',')}\n${s.text.trim()}\n\n`).join('');
}

export function vttOf(t: Transcript): string {
  return `WEBVTT\n\n${t.segments.map((s) => `${clock(s.start, '.')} --> ${clock(s.end, '.')}\n${s.text.trim()}\n\n`).join('')}`;
}

/** The granularities asked for: segments unless only words were (the reference's default is segment). */
export function granularities(request: Pick<TranscriptionRequest, 'timestampGranularities'>): { segments: boolean; words: boolean } {
  const asked = request.timestampGranularities;
  if (!asked || asked.length === 0) return { segments: true, words: false };
  return { segments: asked.includes('segment'), words: asked.includes('word') };
}

/** The answer: a JSON object (svc added by the caller) or a text body. */
export type Formatted = { json: Record<string, unknown> } | { text: string };

export async function formatTranscript(
  request: TranscriptionRequest,
  heard: { language: string; segments: readonly RecognizedSegment[] },
  duration: number,
  billedSeconds: number,
): Promise<Formatted> {
  const t = await transcriptOf(heard.segments, request.temperature ?? 0);
  switch (request.responseFormat) {
    case 'text':
      return { text: `${t.text}\n` };
    case 'srt':
      return { text: srtOf(t) };
    case 'vtt':
      return { text: vttOf(t) };
    case 'json':
      return { json: request.task === 'transcribe' ? { text: t.text, usage: { type: 'duration', seconds: billedSeconds } } : { text: t.text } };
    case 'verbose_json': {
      const g = request.task === 'transcribe' ? granularities(request) : { segments: true, words: false };
      return {
        json: {
          task: request.task,
          language: heard.language,
          duration: round(duration, 2),
          text: t.text,
          ...(g.segments ? { segments: t.segments } : {}),
          ...(g.words ? { words: t.words } : {}),
          ...(request.task === 'transcribe' ? { usage: { type: 'duration', seconds: billedSeconds } } : {}),
        },
      };
    }
  }
}
