// Resampling to the output rate (24 kHz) with the Speex resampler (a windowed-sinc
// polyphase filter, the one Opus and PulseAudio use), compiled to WebAssembly in the npm
// package @echogarden/speex-resampler-wasm. Each piece of speech is resampled on its own:
// its filter delay skipped at the start, its tail flushed with the filter's length of
// silence, and the result exactly round(length * out / in) samples long.
import type { SpeexModule } from '@echogarden/speex-resampler-wasm';

/** Speex quality 0..10: 7 is transparent for speech at a modest cost. */
const QUALITY = 7;

export class Resampler {
  private constructor(private readonly m: SpeexModule) {}

  static async load(): Promise<Resampler> {
    const factory = (await import('@echogarden/speex-resampler-wasm')).default;
    return new Resampler(await factory());
  }

  /** `samples` at `inRate` as `outRate` (a copy when the rates are equal). */
  resample(samples: Int16Array, inRate: number, outRate: number): Int16Array {
    if (inRate === outRate) return samples.slice();
    const m = this.m;
    const want = Math.round((samples.length * outRate) / inRate);
    const err = m._malloc(4);
    const state = m._speex_resampler_init(1, inRate, outRate, QUALITY, err);
    if (state === 0) {
      m._free(err);
      throw new Error(`the resampler cannot convert ${inRate} Hz to ${outRate} Hz`);
    }
    const latency = m._speex_resampler_get_input_latency(state);
    m._speex_resampler_skip_zeros(state);
    // The piece, then the filter's length of silence to push its tail out.
    const input = new Int16Array(samples.length + latency);
    input.set(samples);
    const inPtr = m._malloc(input.length * 2);
    const outCap = want + 64;
    const outPtr = m._malloc(outCap * 2);
    const lens = m._malloc(8);
    const out = new Int16Array(want);
    let read = 0;
    let written = 0;
    try {
      // Views are taken after every malloc: the module's memory may have grown.
      m.HEAP16.set(input, inPtr >> 1);
      while (read < input.length && written < want) {
        m.HEAPU32[lens >> 2] = input.length - read;
        m.HEAPU32[(lens >> 2) + 1] = outCap;
        m._speex_resampler_process_int(state, 0, inPtr + read * 2, lens, outPtr, lens + 4);
        const consumed = m.HEAPU32[lens >> 2]!;
        const produced = m.HEAPU32[(lens >> 2) + 1]!;
        const take = Math.min(produced, want - written);
        out.set(m.HEAP16.subarray(outPtr >> 1, (outPtr >> 1) + take), written);
        written += take;
        read += consumed;
        if (consumed === 0 && produced === 0) break;
      }
    } finally {
      m._free(inPtr);
      m._free(outPtr);
      m._free(lens);
      m._free(err);
      m._speex_resampler_destroy(state);
    }
    return out;
  }
}
