// What the offline image engine reads in a prompt: no text-to-image model runs here (none
// ships with its weights in a package), so a prompt is read for what can be drawn:
// named colours, a vocabulary of objects (each a motif of SVG shapes), how many of each
// ("three cats", "5 balloons", "trees"), and the setting ("at night", "on a beach", "in a
// forest"). The reading is one linear pass over at most MAX_WORDS words; whatever is not
// understood is ignored, and the seed (the whole prompt, the size and the quality) still
// makes every prompt's picture its own.

/** Words read from a prompt (4000 characters make at most about 2000 words). */
const MAX_WORDS = 2_000;
/** Objects of one kind drawn at most, and of all kinds together: the work stays bounded. */
export const MAX_PER_KIND = 12;
export const MAX_OBJECTS = 40;

/** Named colours, as sRGB hex. */
export const COLOURS: Readonly<Record<string, string>> = {
  red: '#d62828', crimson: '#b80f2e', maroon: '#7a1f2b', orange: '#f77f00', coral: '#ff7f50', yellow: '#f6d33c',
  gold: '#e0b52b', golden: '#e0b52b', green: '#2a9d3f', lime: '#8ccf3f', olive: '#7a7d2b', teal: '#1f8a8a', turquoise: '#3cc8c0',
  cyan: '#3ad0e8', blue: '#2f6fd6', navy: '#1d2f6b', indigo: '#3f3a9e', purple: '#7b3fb5', violet: '#8f5bd6', lavender: '#b9a3e3',
  magenta: '#d63ab0', pink: '#f28cb8', brown: '#8a5a2b', beige: '#e8d8b0', black: '#1b1b1f', white: '#f7f7f2', gray: '#8c8c94',
  grey: '#8c8c94', silver: '#c0c4cc',
};

/** The objects drawn, and where they go. */
export const OBJECT_KINDS = {
  sun: 'sky', moon: 'sky', star: 'sky', cloud: 'sky', bird: 'sky', balloon: 'sky', rainbow: 'sky', plane: 'sky',
  tree: 'ground', house: 'ground', mountain: 'horizon', cat: 'ground', dog: 'ground', flower: 'ground', car: 'ground',
  person: 'ground', heart: 'free', circle: 'free', square: 'free', triangle: 'free', boat: 'water', fish: 'water',
} as const;
export type ObjectKind = keyof typeof OBJECT_KINDS;

/** Words (singular and plural) naming each object. */
const OBJECT_WORDS: Readonly<Record<string, ObjectKind>> = {
  sun: 'sun', suns: 'sun', sunshine: 'sun', moon: 'moon', moons: 'moon', star: 'star', stars: 'star', cloud: 'cloud', clouds: 'cloud',
  bird: 'bird', birds: 'bird', balloon: 'balloon', balloons: 'balloon', rainbow: 'rainbow', rainbows: 'rainbow', plane: 'plane',
  planes: 'plane', airplane: 'plane', airplanes: 'plane', tree: 'tree', trees: 'tree', pine: 'tree', pines: 'tree', house: 'house',
  houses: 'house', home: 'house', cottage: 'house', cabin: 'house', mountain: 'mountain', mountains: 'mountain', hill: 'mountain',
  hills: 'mountain', cat: 'cat', cats: 'cat', kitten: 'cat', kittens: 'cat', dog: 'dog', dogs: 'dog', puppy: 'dog', puppies: 'dog',
  flower: 'flower', flowers: 'flower', rose: 'flower', roses: 'flower', tulip: 'flower', tulips: 'flower', car: 'car', cars: 'car',
  person: 'person', people: 'person', man: 'person', woman: 'person', child: 'person', children: 'person', boy: 'person', girl: 'person',
  heart: 'heart', hearts: 'heart', circle: 'circle', circles: 'circle', ball: 'circle', balls: 'circle', dot: 'circle', dots: 'circle',
  square: 'square', squares: 'square', box: 'square', boxes: 'square', cube: 'square', cubes: 'square', triangle: 'triangle',
  triangles: 'triangle', pyramid: 'triangle', pyramids: 'triangle', boat: 'boat', boats: 'boat', ship: 'boat', ships: 'boat',
  sailboat: 'boat', sailboats: 'boat', fish: 'fish', fishes: 'fish',
};

/** Plural forms (a plural without a number means a few). */
const PLURALS = new Set(['suns', 'moons', 'stars', 'clouds', 'birds', 'balloons', 'rainbows', 'planes', 'airplanes', 'trees', 'pines', 'houses', 'mountains', 'hills', 'cats', 'kittens', 'dogs', 'puppies', 'flowers', 'roses', 'tulips', 'cars', 'people', 'children', 'hearts', 'circles', 'balls', 'dots', 'squares', 'boxes', 'cubes', 'triangles', 'pyramids', 'boats', 'ships', 'sailboats', 'fishes']);

const NUMBERS: Readonly<Record<string, number>> = {
  a: 1, an: 1, one: 1, single: 1, two: 2, pair: 2, couple: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, dozen: 12, several: 4, many: 8, some: 3, few: 3,
};

export type Setting = 'day' | 'night' | 'sunset' | 'beach' | 'forest' | 'desert' | 'snow' | 'ocean' | 'space' | 'city' | 'field';

const SETTING_WORDS: Readonly<Record<string, Setting>> = {
  night: 'night', midnight: 'night', nighttime: 'night', evening: 'sunset', sunset: 'sunset', sunrise: 'sunset', dusk: 'sunset',
  dawn: 'sunset', beach: 'beach', seaside: 'beach', shore: 'beach', coast: 'beach', forest: 'forest', woods: 'forest', jungle: 'forest',
  desert: 'desert', dunes: 'desert', snow: 'snow', snowy: 'snow', winter: 'snow', ocean: 'ocean', sea: 'ocean', lake: 'ocean',
  space: 'space', galaxy: 'space', cosmos: 'space', city: 'city', town: 'city', skyline: 'city', field: 'field', meadow: 'field',
  garden: 'field', park: 'field', farm: 'field', day: 'day', daytime: 'day', sunny: 'day',
};

export interface SceneObject {
  kind: ObjectKind;
  count: number;
  /** The colour named just before it ("a red car"), if any. */
  colour?: string;
  /** Where the prompt put it ("on the left"). */
  side?: 'left' | 'right' | 'center';
}

export interface Scene {
  setting: Setting;
  objects: SceneObject[];
  /** Colours named in the prompt, in order, that no object took (they tint the picture). */
  colours: string[];
  /** A background colour ("on a pink background", "blue sky"). */
  background?: string;
}

const WORD = /[a-z]+|\d+/g;

/** Reads a prompt into a scene (one pass, bounded). */
export function readScene(prompt: string): Scene {
  const words = (prompt.toLowerCase().match(WORD) ?? []).slice(0, MAX_WORDS);
  const objects: SceneObject[] = [];
  const byKind = new Map<string, SceneObject>();
  const loose: string[] = [];
  let setting: Setting | undefined;
  let background: string | undefined;
  let count: number | undefined;
  let colour: string | undefined;
  let total = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const next = words[i + 1];
    if (/^\d+$/.test(w)) {
      count = Math.min(Number(w.slice(0, 3)), MAX_PER_KIND);
      continue;
    }
    if (NUMBERS[w] !== undefined) {
      count = NUMBERS[w];
      continue;
    }
    if (COLOURS[w]) {
      if (colour) loose.push(colour);
      colour = COLOURS[w];
      if (next === 'background' || next === 'backdrop' || next === 'sky' || next === 'wall') {
        background = colour;
        colour = undefined;
        i++;
      }
      continue;
    }
    const kind = OBJECT_WORDS[w];
    if (kind) {
      // "sun" in "sunset" never gets here (whole words); "stars at night" keeps both.
      const n = Math.max(1, Math.min(count ?? (PLURALS.has(w) ? 3 : 1), MAX_PER_KIND, MAX_OBJECTS - total));
      if (n > 0 && total < MAX_OBJECTS) {
        // The same kind in the same colour (or none) again adds to it.
        const had = byKind.get(`${kind} ${colour ?? ''}`);
        if (had) had.count = Math.min(MAX_PER_KIND, had.count + n);
        else {
          const object: SceneObject = { kind, count: n, ...(colour ? { colour } : {}) };
          objects.push(object);
          byKind.set(`${kind} ${colour ?? ''}`, object);
        }
        total += n;
      }
      const last = byKind.get(`${kind} ${colour ?? ''}`);
      count = undefined;
      colour = undefined;
      // "... on the left" / "to the right" / "in the middle" right after it.
      const side = sideAt(words, i + 1);
      if (side && last) last.side = side;
      continue;
    }
    const place = SETTING_WORDS[w];
    if (place && (setting === undefined || setting === 'day' || setting === 'field')) setting = place;
    // A word that is neither keeps a pending number and colour ("three small red cats"), but
    // "and" and "with" end them: "make it purple with three cats" recolours, the cats keep their own.
    if (w === 'and' || w === 'with') {
      count = undefined;
      if (colour) loose.push(colour);
      colour = undefined;
    }
  }
  if (colour) loose.push(colour);
  return { setting: setting ?? 'day', objects, colours: loose, ...(background ? { background } : {}) };
}

function sideAt(words: string[], i: number): SceneObject['side'] | undefined {
  for (let k = i; k < Math.min(words.length, i + 4); k++) {
    const w = words[k]!;
    if (w === 'left') return 'left';
    if (w === 'right') return 'right';
    if (w === 'middle' || w === 'center' || w === 'centre') return 'center';
  }
  return undefined;
}
