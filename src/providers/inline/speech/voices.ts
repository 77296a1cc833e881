// The offline speech engine's voices: each voice name of the contract (the reference's
// thirteen and our eve, ara, rex, sal, leo) as one of Flite's built-in voices with a
// pitch and a pace of its own, so no two sound alike. Flite's voices: slt (US female),
// rms (US male), awb (Scottish male), kal16 (US male, diphone: a flatter, older sound).
// `f0` is Flite's int_f0_target_mean (the voice's mean pitch, Hz; rms keeps its own: its
// model ignores the setting, so its three voices differ by pace); `stretch` is Flite's
// duration_stretch (above 1 slower), which `speed` divides. README "Speech" shows this
// table; voices.test.ts keeps the two in step.

export interface OfflineVoice {
  /** Flite's voice name. */
  readonly flite: 'slt' | 'rms' | 'awb' | 'kal16';
  /** Mean pitch in Hz (int_f0_target_mean); absent: the voice's own. */
  readonly f0?: number;
  /** Pace at speed 1 (duration_stretch: above 1 is slower). */
  readonly stretch: number;
  /** How it sounds, for the README's table. */
  readonly sound: string;
}

export const OFFLINE_VOICES = {
  // Female (slt), from low to high.
  alloy: { flite: 'slt', f0: 145, stretch: 1.0, sound: 'female, low, even' },
  sage: { flite: 'slt', f0: 160, stretch: 1.1, sound: 'female, low, unhurried' },
  eve: { flite: 'slt', f0: 180, stretch: 1.0, sound: 'female, middle (the default)' },
  nova: { flite: 'slt', f0: 195, stretch: 0.9, sound: 'female, bright, brisk' },
  ara: { flite: 'slt', f0: 205, stretch: 1.0, sound: 'female, higher' },
  marin: { flite: 'slt', f0: 215, stretch: 1.12, sound: 'female, higher, slow' },
  coral: { flite: 'slt', f0: 232, stretch: 0.95, sound: 'female, high' },
  shimmer: { flite: 'slt', f0: 250, stretch: 1.05, sound: 'female, highest' },
  // Male, US (rms): its own pitch, three paces.
  echo: { flite: 'rms', stretch: 1.0, sound: 'male, US' },
  leo: { flite: 'rms', stretch: 0.86, sound: 'male, US, quick' },
  verse: { flite: 'rms', stretch: 1.18, sound: 'male, US, slow' },
  // Male, Scottish (awb).
  ballad: { flite: 'awb', f0: 100, stretch: 1.12, sound: 'male, Scottish, low, slow' },
  ash: { flite: 'awb', f0: 118, stretch: 1.0, sound: 'male, Scottish' },
  fable: { flite: 'awb', f0: 140, stretch: 1.05, sound: 'male, Scottish, lighter' },
  sal: { flite: 'awb', f0: 165, stretch: 0.95, sound: 'male, Scottish, high' },
  // Male, diphone (kal16).
  onyx: { flite: 'kal16', f0: 78, stretch: 1.08, sound: 'male, deep' },
  cedar: { flite: 'kal16', f0: 100, stretch: 1.0, sound: 'male, plain' },
  rex: { flite: 'kal16', f0: 125, stretch: 0.9, sound: 'male, raised, quick' },
} as const satisfies Record<string, OfflineVoice>;

export type VoiceName = keyof typeof OFFLINE_VOICES;

/** The voice `agent-voice` (and any model) speaks in when the request names none. */
export const DEFAULT_VOICE: VoiceName = 'eve';

/** Flite's arguments for a voice at a speed (0.25 to 4): the voice, its pitch, its pace divided by the speed. */
export function fliteSettings(voice: VoiceName, speed: number): string[] {
  const v: OfflineVoice = OFFLINE_VOICES[voice];
  const args = ['-voice', v.flite];
  if (v.f0 !== undefined) args.push('--setf', `int_f0_target_mean=${v.f0}`);
  // Rounded so the same request always gives Flite the very same text.
  args.push('--setf', `duration_stretch=${Number((v.stretch / speed).toFixed(4))}`);
  return args;
}
