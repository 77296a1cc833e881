// The offline transcription engine: ffmpeg (npm @ffmpeg-installer/ffmpeg) decodes the
// upload to 16 kHz mono, PocketSphinx's en-US model (Debian pocketsphinx,
// pocketsphinx-en-us) recognizes it, and segments end at pauses. English only. Measured
// on read speech: about 35% word error rate (Whisper's smallest model: about 5 to 8%):
// fine to try the API offline, not for real use; an upstream is (UPSTREAM_TRANSCRIPTION).
import type { TranscriptionProvider } from '../../types.ts';
import { AudioDecoder } from './audio-decoder.ts';
import { PocketSphinx } from './pocketsphinx.ts';
import { bundledFfmpeg, ProgramQueue } from './programs.ts';

export interface TranscriptionSettings {
  /** Programs (decodes and recognitions) one instance runs at once. */
  concurrency: number;
  /** Transcriptions that may wait for a program slot; more get a 503. */
  queue: number;
  /** A program's time limit. */
  timeoutMs: number;
  /** pocketsphinx_continuous: a name on PATH or a path. */
  pocketsphinx: string;
}

/** The decoding both engines share (the upstream's duration is measured here too, to bound and charge it). */
export function createTranscriptionTools(settings: TranscriptionSettings) {
  const queue = new ProgramQueue(settings.concurrency, settings.queue);
  return { queue, decoder: new AudioDecoder(bundledFfmpeg(), queue, settings.timeoutMs) };
}

export const OFFLINE_TRANSCRIPTION_NOTE =
  'The offline engine is PocketSphinx (en-US): English only, about 35% word error rate on read speech (Whisper: about 5 to 8%); configure an upstream (UPSTREAM_TRANSCRIPTION=upstream) for real use.';

export function createOfflineTranscription(settings: TranscriptionSettings, tools = createTranscriptionTools(settings)): TranscriptionProvider {
  const recognizer = new PocketSphinx(settings.pocketsphinx, tools.queue, settings.timeoutMs);
  return {
    name: 'offline',
    languages: ['en'],
    status() {
      const missing = tools.decoder.missing ?? (() => {
        const s = recognizer.status();
        return 'missing' in s ? s.missing : undefined;
      })();
      return missing ? { available: false, reason: missing } : { available: true, describe: 'offline (pocketsphinx en-US, English only)' };
    },
    decode: (inputPath, dir, signal) => tools.decoder.decode(inputPath, dir, signal),
    async transcribe(_request, audio, signal) {
      return { kind: 'segments', language: 'english', segments: await recognizer.recognize(audio.pcmPath, signal) };
    },
  };
}
