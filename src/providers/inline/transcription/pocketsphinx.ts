// Recognition with PocketSphinx's en-US model (Debian packages `pocketsphinx` and
// `pocketsphinx-en-us`): `pocketsphinx_continuous -infile <raw pcm> -time yes` prints, per
// utterance (its voice activity detection cuts at pauses), the hypothesis and then one
// line per word: `word start end confidence` (seconds, posterior 0 to 1), `<s>`, `</s>`,
// `<sil>` and noise fillers among them, alternative pronunciations as `word(2)`.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { serviceUnavailable } from '../../../errors.ts';
import type { RecognizedSegment, RecognizedWord } from '../../types.ts';
import { ProgramFailure, runProgram, type ProgramQueue } from './programs.ts';

/** Where pocketsphinx-en-us puts the acoustic model (the program's compiled-in default). */
export const EN_US_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us/en-us';
export const INSTALL_HINT = 'install the Debian packages pocketsphinx and pocketsphinx-en-us: apt-get install pocketsphinx pocketsphinx-en-us';

/** A pause within an utterance at least this long starts a new segment. */
const PAUSE_SECONDS = 0.35;
/** Segments are cut at a word boundary past this length (Whisper's are at most 30 s). */
const MAX_SEGMENT_SECONDS = 30;

/** The program to run: a path, or a name looked up on PATH. */
function resolveProgram(program: string): string | undefined {
  if (program.includes('/')) return existsSync(program) ? program : undefined;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Whether PocketSphinx can run here, or what to install. */
export function pocketsphinxStatus(program: string, modelDir = EN_US_MODEL_DIR): { path: string } | { missing: string } {
  const found = resolveProgram(program);
  if (!found) return { missing: `${program} is not installed: ${INSTALL_HINT}` };
  if (!existsSync(modelDir)) return { missing: `the en-US model (${modelDir}) is not installed: ${INSTALL_HINT}` };
  return { path: found };
}

const FILLER = /^(<s>|<\/s>|<sil>|\[[^\]]*\]|\+\+.*\+\+|\+.*\+)$/;

/** The word lines of the program's output, grouped by utterance, fillers dropped, pauses kept as cut points. */
export function parseOutput(stdout: string): RecognizedSegment[] {
  const segments: RecognizedSegment[] = [];
  let words: RecognizedWord[] = [];
  let lastEnd = -1;
  const flush = () => {
    if (words.length > 0) segments.push({ start: words[0]!.start, end: words.at(-1)!.end, words });
    words = [];
  };
  for (const line of stdout.split('\n')) {
    const m = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?(?:e-?\d+)?)$/.exec(line.trim());
    if (!m) continue;
    const [, token, s, e, c] = m;
    const start = Number(s);
    const end = Number(e);
    if (token === '<s>') {
      flush();
      continue;
    }
    if (token === '<sil>' || token === '</s>') {
      if (token === '</s>' || end - start >= PAUSE_SECONDS) flush();
      continue;
    }
    if (FILLER.test(token!)) continue;
    const word = token!.replace(/\(\d+\)$/, '');
    if (words.length > 0 && (start - lastEnd >= PAUSE_SECONDS || end - words[0]!.start > MAX_SEGMENT_SECONDS)) flush();
    words.push({ word, start, end: Math.max(start, end), confidence: Math.min(1, Math.max(0, Number(c))) });
    lastEnd = end;
  }
  flush();
  return segments;
}

export class PocketSphinx {
  constructor(
    private readonly program: string,
    private readonly queue: ProgramQueue,
    private readonly timeoutMs: number,
  ) {}

  status(): { path: string } | { missing: string } {
    return pocketsphinxStatus(this.program);
  }

  async recognize(pcmPath: string, signal: AbortSignal): Promise<RecognizedSegment[]> {
    const found = this.status();
    if ('missing' in found) throw serviceUnavailable(`Transcription is not available here: ${found.missing}; or configure an upstream (UPSTREAM_TRANSCRIPTION=upstream).`);
    // The raw file's name must not end in .wav (the program would look for a header); -samprate matches the decode.
    const args = ['-infile', pcmPath, '-time', 'yes', '-samprate', '16000', '-logfn', '/dev/null'];
    try {
      const { stdout } = await this.queue.run(signal, () => runProgram(found.path, args, { timeoutMs: this.timeoutMs, signal }));
      return parseOutput(stdout);
    } catch (err) {
      if (!(err instanceof ProgramFailure)) throw err;
      if (err.kind === 'missing') throw serviceUnavailable(`Transcription is not available here: ${found.path} cannot be run: ${INSTALL_HINT}.`);
      if (err.kind === 'timeout') throw serviceUnavailable(`Recognizing the audio took longer than the limit (${this.timeoutMs} ms, AGENT_API_TRANSCRIPTION_TIMEOUT_MS); try a shorter file.`);
      throw new Error(`pocketsphinx_continuous failed: ${err.message}`);
    }
  }
}
