// Decoding an upload to what the recognizer reads (16 kHz mono 16-bit PCM) with the ffmpeg
// that ships in the npm package @ffmpeg-installer/ffmpeg. The format is judged by content
// (ffmpeg probes it; the name and Content-Type are never used), among the audio demuxers
// of the reference's list only, and from the local file only: a playlist or a concat list
// dressed as audio can make ffmpeg open other files or URLs, which these whitelists refuse.
// The duration comes from the decoded samples, so it is what the recognizer will read and
// what the call is charged for.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { invalidRequest, serviceUnavailable } from '../../../errors.ts';
import type { DecodedAudio } from '../../types.ts';
import { ProgramFailure, runProgram, type ProgramQueue } from './programs.ts';

export const SAMPLE_RATE = 16_000;
/** Bytes per second of the decoded audio (16-bit mono). */
const BYTES_PER_SECOND = SAMPLE_RATE * 2;
/** The longest audio decoded (25 MB of low-bitrate audio can hold many hours; this keeps the temp file under 250 MB). */
export const MAX_AUDIO_SECONDS = 2 * 3600;

/** wav, mp3 (mpga), flac, ogg (oga), mov/mp4/m4a, matroska/webm, mpeg, raw aac. */
const DEMUXERS = 'wav,mp3,flac,ogg,mov,matroska,mpeg,aac';

export const NOT_AUDIO =
  'The file could not be decoded as audio: send flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav or webm (the format is judged by its content, not its name).';

export class AudioDecoder {
  constructor(
    private readonly ffmpeg: { path: string } | { missing: string },
    private readonly queue: ProgramQueue,
    private readonly timeoutMs: number,
  ) {}

  /** Why it cannot decode here, if it cannot. */
  get missing(): string | undefined {
    return 'missing' in this.ffmpeg ? this.ffmpeg.missing : undefined;
  }

  async decode(inputPath: string, dir: string, signal: AbortSignal): Promise<DecodedAudio> {
    if ('missing' in this.ffmpeg) throw serviceUnavailable(`Transcription cannot decode audio here: ${this.ffmpeg.missing}.`);
    const ffmpeg = this.ffmpeg.path;
    const pcmPath = path.join(dir, 'audio.pcm');
    const args = [
      '-nostdin', '-hide_banner', '-loglevel', 'error', '-threads', '1',
      '-protocol_whitelist', 'file', '-format_whitelist', DEMUXERS,
      '-i', `file:${inputPath}`,
      '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(SAMPLE_RATE), '-acodec', 'pcm_s16le', '-f', 's16le',
      // One second past the limit, to tell audio at the limit from audio over it.
      '-t', String(MAX_AUDIO_SECONDS + 1),
      '-y', `file:${pcmPath}`,
    ];
    try {
      await this.queue.run(signal, () => runProgram(ffmpeg, args, { timeoutMs: this.timeoutMs, signal, maxBuffer: 1024 * 1024 }));
    } catch (err) {
      if (!(err instanceof ProgramFailure)) throw err;
      if (err.kind === 'missing') throw serviceUnavailable(`Transcription cannot decode audio here: ${ffmpeg} cannot be run; reinstall the npm package @ffmpeg-installer/ffmpeg (npm ci).`);
      if (err.kind === 'timeout') throw serviceUnavailable(`Decoding the audio took longer than the limit (${this.timeoutMs} ms, AGENT_API_TRANSCRIPTION_TIMEOUT_MS); try a shorter file.`);
      throw invalidRequest(NOT_AUDIO, 'file');
    }
    const bytes = (await stat(pcmPath)).size;
    const seconds = bytes / BYTES_PER_SECOND;
    if (bytes < BYTES_PER_SECOND / 100) throw invalidRequest('The file holds no audio to transcribe (less than 10 ms once decoded).', 'file');
    if (seconds > MAX_AUDIO_SECONDS) throw invalidRequest(`The audio is longer than ${MAX_AUDIO_SECONDS / 3600} hours; split it into shorter files.`, 'file');
    return { inputPath, pcmPath, seconds };
  }
}
