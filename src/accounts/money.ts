// Credits and dollars travel as decimal numbers and are stored as integer micro-units.
export const toMicro = (value: number): number => Math.round(value * 1_000_000);
export const fromMicro = (micro: number): number => Math.round(micro) / 1_000_000;
