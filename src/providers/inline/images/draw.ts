// The offline image engine's drawing: a scene (scene.ts) laid out as SVG at exactly the
// pixel size asked, every choice (positions, sizes, shades) from a PRNG seeded by the
// request, never the clock, so the same request draws the same picture. The quality sets
// the detail (gradients, shadows, texture strokes), never the size. The work is bounded:
// at most MAX_OBJECTS motifs of a few shapes each plus at most 240 texture strokes.
import { createHash } from 'node:crypto';
import { mulberry32, type Rng } from '../offline/rng.ts';
import type { ImageQuality } from '../../types.ts';
import { OBJECT_KINDS, type ObjectKind, type Scene, type SceneObject, type Setting } from './scene.ts';

/** Detail by quality: texture strokes, gradients and shadows from hd up, outlines at max. */
const DETAIL: Record<ImageQuality, { texture: number; gradients: boolean; shadows: boolean; outlines: boolean }> = {
  standard: { texture: 0, gradients: false, shadows: false, outlines: false },
  hd: { texture: 60, gradients: true, shadows: true, outlines: false },
  high: { texture: 140, gradients: true, shadows: true, outlines: false },
  max: { texture: 240, gradients: true, shadows: true, outlines: true },
};

/** A 32-bit seed from every part of the request that decides the picture. */
export function seedOf(...parts: (string | number)[]): number {
  const h = createHash('sha256');
  for (const p of parts) h.update(String(p)).update('\u0000');
  return h.digest().readUInt32LE(0);
}

const f = (n: number) => (Math.round(n * 10) / 10).toString();

interface Palette {
  skyTop: string;
  skyBottom: string;
  ground: string;
  groundDark: string;
  water?: string;
  horizon: number;
}

const PALETTES: Record<Setting, Palette> = {
  day: { skyTop: '#5ea8f0', skyBottom: '#bfe3ff', ground: '#6cbf4a', groundDark: '#4f9a34', horizon: 0.64 },
  field: { skyTop: '#6bb3f2', skyBottom: '#d4ecff', ground: '#7fcf52', groundDark: '#5aa83a', horizon: 0.6 },
  night: { skyTop: '#0b1030', skyBottom: '#26305e', ground: '#1f3a2a', groundDark: '#142619', horizon: 0.68 },
  sunset: { skyTop: '#4b2a72', skyBottom: '#ff9a4d', ground: '#5b4a3a', groundDark: '#3d3127', horizon: 0.66 },
  beach: { skyTop: '#4fb0f0', skyBottom: '#cdefff', ground: '#ecd8a0', groundDark: '#d9c07f', water: '#2a8fc9', horizon: 0.5 },
  ocean: { skyTop: '#4aa6ea', skyBottom: '#c9ecff', ground: '#1f6fa8', groundDark: '#17557f', water: '#1f6fa8', horizon: 0.45 },
  forest: { skyTop: '#7db7d9', skyBottom: '#dcefe6', ground: '#3f7a32', groundDark: '#2c5a23', horizon: 0.62 },
  desert: { skyTop: '#f2b35e', skyBottom: '#fde3b0', ground: '#e3b36b', groundDark: '#c99447', horizon: 0.6 },
  snow: { skyTop: '#9fb8d0', skyBottom: '#e8f0f7', ground: '#f4f7fb', groundDark: '#d5e0eb', horizon: 0.62 },
  space: { skyTop: '#02030a', skyBottom: '#120a2a', ground: '#120a2a', groundDark: '#120a2a', horizon: 1 },
  city: { skyTop: '#8fb2d6', skyBottom: '#e3ecf5', ground: '#6d6f75', groundDark: '#55575c', horizon: 0.66 },
};

const DEFAULT_COLOURS: Record<ObjectKind, string[]> = {
  sun: ['#ffd23f', '#ffb627'], moon: ['#f4f1de', '#e9e4c9'], star: ['#fff3b0', '#ffe066'], cloud: ['#ffffff', '#f1f4f8'],
  bird: ['#2b2d42', '#3d405b'], balloon: ['#e63946', '#f4a261', '#2a9d8f', '#e9c46a', '#9b5de5'], rainbow: ['#e63946'],
  plane: ['#e5e5e5', '#d0d4da'], tree: ['#2d6a4f', '#40916c', '#1b4332'], house: ['#e76f51', '#f4a261', '#e9c46a', '#a8dadc'],
  mountain: ['#6c757d', '#7d8597', '#5c677d'], cat: ['#f4a261', '#6c584c', '#2b2d42', '#e9ecef'], dog: ['#a47148', '#d4a373', '#6f4518'],
  flower: ['#ff5d8f', '#ffd60a', '#c77dff', '#ff8fab', '#f94144'], car: ['#e63946', '#1d3557', '#ffb703', '#2a9d8f'],
  person: ['#3a86ff', '#ff006e', '#8338ec', '#fb5607'], heart: ['#e63946', '#ff4d6d'], circle: ['#3a86ff', '#ff006e', '#ffbe0b'],
  square: ['#8338ec', '#3a86ff', '#fb5607'], triangle: ['#ffbe0b', '#06d6a0', '#ef476f'], boat: ['#f1faee', '#e63946', '#ffb703'],
  fish: ['#ff9f1c', '#2ec4b6', '#ffbf69'],
};

/** A colour mixed toward another (t = 0: a, 1: b). */
export function mix(a: string, b: string, t: number): string {
  const pa = parseInt(a.slice(1), 16);
  const pb = parseInt(b.slice(1), 16);
  const ch = (s: number) => Math.round(((pa >> s) & 255) * (1 - t) + ((pb >> s) & 255) * t);
  return `#${((ch(16) << 16) | (ch(8) << 8) | ch(0)).toString(16).padStart(6, '0')}`;
}

interface Ctx {
  w: number;
  h: number;
  /** The picture's unit: a hundredth of its shorter side. */
  u: number;
  rng: Rng;
  detail: (typeof DETAIL)[ImageQuality];
  out: string[];
}

const shadow = (c: Ctx, x: number, y: number, rx: number) => {
  if (c.detail.shadows) c.out.push(`<ellipse cx="${f(x)}" cy="${f(y)}" rx="${f(rx)}" ry="${f(rx * 0.22)}" fill="#000" opacity="0.18"/>`);
};
const stroke = (c: Ctx) => (c.detail.outlines ? ` stroke="#1b1b1f" stroke-width="${f(c.u * 0.35)}" stroke-opacity="0.55"` : '');

/** Each motif: drawn centred on (x, y) at scale s (about its height), in colour `col`. */
const MOTIFS: Record<ObjectKind, (c: Ctx, x: number, y: number, s: number, col: string) => void> = {
  sun(c, x, y, s, col) {
    const r = s * 0.35;
    for (let k = 0; k < 12; k++) {
      const a = (k / 12) * Math.PI * 2;
      c.out.push(`<line x1="${f(x + Math.cos(a) * r * 1.2)}" y1="${f(y + Math.sin(a) * r * 1.2)}" x2="${f(x + Math.cos(a) * r * 1.6)}" y2="${f(y + Math.sin(a) * r * 1.6)}" stroke="${col}" stroke-width="${f(s * 0.05)}" stroke-linecap="round"/>`);
    }
    c.out.push(`<circle cx="${f(x)}" cy="${f(y)}" r="${f(r)}" fill="${col}"${stroke(c)}/>`);
  },
  moon(c, x, y, s, col) {
    const r = s * 0.35;
    c.out.push(`<path d="M ${f(x)} ${f(y - r)} A ${f(r)} ${f(r)} 0 1 0 ${f(x)} ${f(y + r)} A ${f(r * 0.7)} ${f(r)} 0 1 1 ${f(x)} ${f(y - r)} Z" fill="${col}"${stroke(c)}/>`);
  },
  star(c, x, y, s, col) {
    const pts: string[] = [];
    for (let k = 0; k < 10; k++) {
      const a = -Math.PI / 2 + (k * Math.PI) / 5;
      const r = k % 2 === 0 ? s * 0.3 : s * 0.12;
      pts.push(`${f(x + Math.cos(a) * r)},${f(y + Math.sin(a) * r)}`);
    }
    c.out.push(`<polygon points="${pts.join(' ')}" fill="${col}"${stroke(c)}/>`);
  },
  cloud(c, x, y, s, col) {
    for (const [dx, dy, r] of [[-0.3, 0.05, 0.2], [0, -0.08, 0.26], [0.3, 0.04, 0.2], [0.12, 0.1, 0.18], [-0.12, 0.1, 0.18]] as const) {
      c.out.push(`<circle cx="${f(x + dx * s)}" cy="${f(y + dy * s)}" r="${f(r * s)}" fill="${col}" opacity="0.95"/>`);
    }
  },
  bird(c, x, y, s, col) {
    const a = s * 0.25;
    c.out.push(`<path d="M ${f(x - a)} ${f(y)} Q ${f(x - a / 2)} ${f(y - a / 2)} ${f(x)} ${f(y)} Q ${f(x + a / 2)} ${f(y - a / 2)} ${f(x + a)} ${f(y)}" fill="none" stroke="${col}" stroke-width="${f(s * 0.04)}" stroke-linecap="round"/>`);
  },
  balloon(c, x, y, s, col) {
    c.out.push(`<line x1="${f(x)}" y1="${f(y + s * 0.22)}" x2="${f(x + s * 0.03)}" y2="${f(y + s * 0.6)}" stroke="#444" stroke-width="${f(s * 0.012)}"/>`);
    c.out.push(`<ellipse cx="${f(x)}" cy="${f(y)}" rx="${f(s * 0.17)}" ry="${f(s * 0.22)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<ellipse cx="${f(x - s * 0.05)}" cy="${f(y - s * 0.08)}" rx="${f(s * 0.04)}" ry="${f(s * 0.06)}" fill="#fff" opacity="0.45"/>`);
  },
  rainbow(c, x, y, s) {
    const bands = ['#e63946', '#f77f00', '#fcbf49', '#2a9d8f', '#3a86ff', '#7b2cbf'];
    bands.forEach((band, k) => {
      const r = s * (1 - k * 0.08);
      c.out.push(`<path d="M ${f(x - r)} ${f(y + s * 0.4)} A ${f(r)} ${f(r)} 0 0 1 ${f(x + r)} ${f(y + s * 0.4)}" fill="none" stroke="${band}" stroke-width="${f(s * 0.08)}" opacity="0.85"/>`);
    });
  },
  plane(c, x, y, s, col) {
    c.out.push(`<ellipse cx="${f(x)}" cy="${f(y)}" rx="${f(s * 0.4)}" ry="${f(s * 0.07)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<polygon points="${f(x - s * 0.05)},${f(y)} ${f(x + s * 0.12)},${f(y)} ${f(x - s * 0.1)},${f(y + s * 0.3)}" fill="${mix(col, '#000', 0.15)}"/>`);
    c.out.push(`<polygon points="${f(x - s * 0.3)},${f(y)} ${f(x - s * 0.38)},${f(y - s * 0.18)} ${f(x - s * 0.24)},${f(y)}" fill="${mix(col, '#000', 0.15)}"/>`);
  },
  tree(c, x, y, s, col) {
    shadow(c, x, y, s * 0.3);
    c.out.push(`<rect x="${f(x - s * 0.05)}" y="${f(y - s * 0.3)}" width="${f(s * 0.1)}" height="${f(s * 0.3)}" fill="#6b4226"/>`);
    c.out.push(`<polygon points="${f(x)},${f(y - s)} ${f(x - s * 0.3)},${f(y - s * 0.45)} ${f(x + s * 0.3)},${f(y - s * 0.45)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<polygon points="${f(x)},${f(y - s * 0.8)} ${f(x - s * 0.36)},${f(y - s * 0.25)} ${f(x + s * 0.36)},${f(y - s * 0.25)}" fill="${mix(col, '#000', 0.12)}"${stroke(c)}/>`);
  },
  house(c, x, y, s, col) {
    shadow(c, x, y, s * 0.5);
    const w = s * 0.7;
    c.out.push(`<rect x="${f(x - w / 2)}" y="${f(y - s * 0.5)}" width="${f(w)}" height="${f(s * 0.5)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<polygon points="${f(x - w * 0.6)},${f(y - s * 0.5)} ${f(x)},${f(y - s * 0.9)} ${f(x + w * 0.6)},${f(y - s * 0.5)}" fill="${mix(col, '#5a1a0a', 0.55)}"${stroke(c)}/>`);
    c.out.push(`<rect x="${f(x - s * 0.07)}" y="${f(y - s * 0.25)}" width="${f(s * 0.14)}" height="${f(s * 0.25)}" fill="#5a3a22"/>`);
    c.out.push(`<rect x="${f(x + s * 0.12)}" y="${f(y - s * 0.4)}" width="${f(s * 0.12)}" height="${f(s * 0.1)}" fill="#fdf0a6"/>`);
    c.out.push(`<rect x="${f(x - s * 0.24)}" y="${f(y - s * 0.4)}" width="${f(s * 0.12)}" height="${f(s * 0.1)}" fill="#fdf0a6"/>`);
  },
  mountain(c, x, y, s, col) {
    c.out.push(`<polygon points="${f(x - s)},${f(y)} ${f(x)},${f(y - s)} ${f(x + s)},${f(y)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<polygon points="${f(x - s * 0.25)},${f(y - s * 0.75)} ${f(x)},${f(y - s)} ${f(x + s * 0.25)},${f(y - s * 0.75)} ${f(x + s * 0.08)},${f(y - s * 0.7)} ${f(x - s * 0.08)},${f(y - s * 0.78)}" fill="#f8f9fa"/>`);
  },
  cat(c, x, y, s, col) {
    shadow(c, x, y, s * 0.3);
    c.out.push(`<ellipse cx="${f(x)}" cy="${f(y - s * 0.22)}" rx="${f(s * 0.22)}" ry="${f(s * 0.2)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<circle cx="${f(x)}" cy="${f(y - s * 0.55)}" r="${f(s * 0.16)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<polygon points="${f(x - s * 0.15)},${f(y - s * 0.6)} ${f(x - s * 0.12)},${f(y - s * 0.8)} ${f(x - s * 0.02)},${f(y - s * 0.68)}" fill="${col}"/>`);
    c.out.push(`<polygon points="${f(x + s * 0.15)},${f(y - s * 0.6)} ${f(x + s * 0.12)},${f(y - s * 0.8)} ${f(x + s * 0.02)},${f(y - s * 0.68)}" fill="${col}"/>`);
    c.out.push(`<path d="M ${f(x + s * 0.2)} ${f(y - s * 0.15)} Q ${f(x + s * 0.45)} ${f(y - s * 0.2)} ${f(x + s * 0.38)} ${f(y - s * 0.5)}" fill="none" stroke="${col}" stroke-width="${f(s * 0.05)}" stroke-linecap="round"/>`);
    c.out.push(`<circle cx="${f(x - s * 0.06)}" cy="${f(y - s * 0.57)}" r="${f(s * 0.025)}" fill="#1b1b1f"/><circle cx="${f(x + s * 0.06)}" cy="${f(y - s * 0.57)}" r="${f(s * 0.025)}" fill="#1b1b1f"/>`);
  },
  dog(c, x, y, s, col) {
    shadow(c, x, y, s * 0.35);
    c.out.push(`<rect x="${f(x - s * 0.3)}" y="${f(y - s * 0.45)}" width="${f(s * 0.5)}" height="${f(s * 0.25)}" rx="${f(s * 0.1)}" fill="${col}"${stroke(c)}/>`);
    for (const dx of [-0.25, -0.1, 0.05, 0.15]) c.out.push(`<rect x="${f(x + dx * s)}" y="${f(y - s * 0.22)}" width="${f(s * 0.06)}" height="${f(s * 0.22)}" fill="${col}"/>`);
    c.out.push(`<circle cx="${f(x + s * 0.28)}" cy="${f(y - s * 0.55)}" r="${f(s * 0.14)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<ellipse cx="${f(x + s * 0.2)}" cy="${f(y - s * 0.52)}" rx="${f(s * 0.05)}" ry="${f(s * 0.1)}" fill="${mix(col, '#000', 0.35)}"/>`);
    c.out.push(`<circle cx="${f(x + s * 0.33)}" cy="${f(y - s * 0.58)}" r="${f(s * 0.022)}" fill="#1b1b1f"/>`);
  },
  flower(c, x, y, s, col) {
    c.out.push(`<line x1="${f(x)}" y1="${f(y)}" x2="${f(x)}" y2="${f(y - s * 0.5)}" stroke="#2d6a4f" stroke-width="${f(s * 0.04)}"/>`);
    for (let k = 0; k < 6; k++) {
      const a = (k / 6) * Math.PI * 2;
      c.out.push(`<circle cx="${f(x + Math.cos(a) * s * 0.1)}" cy="${f(y - s * 0.55 + Math.sin(a) * s * 0.1)}" r="${f(s * 0.08)}" fill="${col}"/>`);
    }
    c.out.push(`<circle cx="${f(x)}" cy="${f(y - s * 0.55)}" r="${f(s * 0.06)}" fill="#ffd60a"${stroke(c)}/>`);
  },
  car(c, x, y, s, col) {
    shadow(c, x, y, s * 0.5);
    c.out.push(`<rect x="${f(x - s * 0.5)}" y="${f(y - s * 0.35)}" width="${f(s)}" height="${f(s * 0.22)}" rx="${f(s * 0.06)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<path d="M ${f(x - s * 0.28)} ${f(y - s * 0.35)} L ${f(x - s * 0.18)} ${f(y - s * 0.55)} L ${f(x + s * 0.2)} ${f(y - s * 0.55)} L ${f(x + s * 0.3)} ${f(y - s * 0.35)} Z" fill="${mix(col, '#000', 0.15)}"/>`);
    c.out.push(`<rect x="${f(x - s * 0.14)}" y="${f(y - s * 0.51)}" width="${f(s * 0.28)}" height="${f(s * 0.13)}" fill="#bde0fe"/>`);
    for (const dx of [-0.3, 0.3]) c.out.push(`<circle cx="${f(x + dx * s)}" cy="${f(y - s * 0.12)}" r="${f(s * 0.11)}" fill="#222"/><circle cx="${f(x + dx * s)}" cy="${f(y - s * 0.12)}" r="${f(s * 0.05)}" fill="#aaa"/>`);
  },
  person(c, x, y, s, col) {
    shadow(c, x, y, s * 0.2);
    c.out.push(`<circle cx="${f(x)}" cy="${f(y - s * 0.85)}" r="${f(s * 0.1)}" fill="#f1c27d"/>`);
    c.out.push(`<rect x="${f(x - s * 0.11)}" y="${f(y - s * 0.73)}" width="${f(s * 0.22)}" height="${f(s * 0.38)}" rx="${f(s * 0.05)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<rect x="${f(x - s * 0.1)}" y="${f(y - s * 0.36)}" width="${f(s * 0.08)}" height="${f(s * 0.36)}" fill="#264653"/><rect x="${f(x + s * 0.02)}" y="${f(y - s * 0.36)}" width="${f(s * 0.08)}" height="${f(s * 0.36)}" fill="#264653"/>`);
  },
  heart(c, x, y, s, col) {
    const r = s * 0.3;
    c.out.push(`<path d="M ${f(x)} ${f(y + r)} C ${f(x - r * 1.6)} ${f(y - r * 0.2)} ${f(x - r * 0.6)} ${f(y - r * 1.3)} ${f(x)} ${f(y - r * 0.45)} C ${f(x + r * 0.6)} ${f(y - r * 1.3)} ${f(x + r * 1.6)} ${f(y - r * 0.2)} ${f(x)} ${f(y + r)} Z" fill="${col}"${stroke(c)}/>`);
  },
  circle(c, x, y, s, col) {
    c.out.push(`<circle cx="${f(x)}" cy="${f(y)}" r="${f(s * 0.3)}" fill="${col}"${stroke(c)}/>`);
  },
  square(c, x, y, s, col) {
    c.out.push(`<rect x="${f(x - s * 0.28)}" y="${f(y - s * 0.28)}" width="${f(s * 0.56)}" height="${f(s * 0.56)}" fill="${col}"${stroke(c)}/>`);
  },
  triangle(c, x, y, s, col) {
    c.out.push(`<polygon points="${f(x)},${f(y - s * 0.32)} ${f(x - s * 0.32)},${f(y + s * 0.26)} ${f(x + s * 0.32)},${f(y + s * 0.26)}" fill="${col}"${stroke(c)}/>`);
  },
  boat(c, x, y, s, col) {
    c.out.push(`<path d="M ${f(x - s * 0.45)} ${f(y - s * 0.15)} L ${f(x + s * 0.45)} ${f(y - s * 0.15)} L ${f(x + s * 0.3)} ${f(y)} L ${f(x - s * 0.3)} ${f(y)} Z" fill="${mix(col, '#000', 0.5)}"${stroke(c)}/>`);
    c.out.push(`<line x1="${f(x)}" y1="${f(y - s * 0.15)}" x2="${f(x)}" y2="${f(y - s * 0.8)}" stroke="#5a3a22" stroke-width="${f(s * 0.03)}"/>`);
    c.out.push(`<polygon points="${f(x + s * 0.02)},${f(y - s * 0.78)} ${f(x + s * 0.35)},${f(y - s * 0.22)} ${f(x + s * 0.02)},${f(y - s * 0.22)}" fill="${col}"${stroke(c)}/>`);
  },
  fish(c, x, y, s, col) {
    c.out.push(`<ellipse cx="${f(x)}" cy="${f(y)}" rx="${f(s * 0.25)}" ry="${f(s * 0.13)}" fill="${col}"${stroke(c)}/>`);
    c.out.push(`<polygon points="${f(x + s * 0.22)},${f(y)} ${f(x + s * 0.4)},${f(y - s * 0.12)} ${f(x + s * 0.4)},${f(y + s * 0.12)}" fill="${col}"/>`);
    c.out.push(`<circle cx="${f(x - s * 0.13)}" cy="${f(y - s * 0.03)}" r="${f(s * 0.025)}" fill="#1b1b1f"/>`);
  },
};

/** The sky, the ground and the setting's own features. */
function drawSetting(c: Ctx, scene: Scene, pal: Palette): void {
  const { w, h, u, rng } = c;
  const horizonY = pal.horizon * h;
  const skyTop = scene.background ?? pal.skyTop;
  const skyBottom = scene.background ? mix(scene.background, '#ffffff', 0.25) : pal.skyBottom;
  if (c.detail.gradients) {
    c.out.push(`<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${skyTop}"/><stop offset="1" stop-color="${skyBottom}"/></linearGradient></defs>`);
    c.out.push(`<rect width="${w}" height="${h}" fill="url(#sky)"/>`);
  } else c.out.push(`<rect width="${w}" height="${h}" fill="${mix(skyTop, skyBottom, 0.5)}"/>`);
  const setting = scene.setting;
  if (setting === 'night' || setting === 'space') {
    const n = setting === 'space' ? 90 : 50;
    for (let k = 0; k < n; k++) c.out.push(`<circle cx="${f(rng.next() * w)}" cy="${f(rng.next() * horizonY)}" r="${f(u * (0.15 + rng.next() * 0.35))}" fill="#fffbe6" opacity="${f(0.5 + rng.next() * 0.5)}"/>`);
  }
  if (setting === 'space') {
    for (let k = 0; k < 2; k++) {
      const r = u * (6 + rng.next() * 10);
      const col = rng.pick(['#c1121f', '#669bbc', '#e9c46a', '#8d99ae']);
      c.out.push(`<circle cx="${f(rng.next() * w)}" cy="${f(rng.next() * h)}" r="${f(r)}" fill="${col}"/>`);
    }
    return;
  }
  if (setting === 'sunset') c.out.push(`<circle cx="${f(w * (0.3 + rng.next() * 0.4))}" cy="${f(horizonY)}" r="${f(u * 14)}" fill="#ff6b35" opacity="0.9"/>`);
  if (setting === 'city') {
    let x = 0;
    while (x < w) {
      const bw = u * (6 + rng.next() * 10);
      const bh = h * (0.12 + rng.next() * 0.3);
      c.out.push(`<rect x="${f(x)}" y="${f(horizonY - bh)}" width="${f(bw)}" height="${f(bh + 1)}" fill="${rng.pick(['#5c677d', '#7d8597', '#33415c', '#979dac'])}"/>`);
      x += bw + u * rng.next() * 2;
    }
  }
  if (setting === 'forest') {
    for (let k = 0; k < 14; k++) MOTIFS.tree(c, rng.next() * w, horizonY + u * 2, u * (14 + rng.next() * 10), rng.pick(['#1b4332', '#2d6a4f', '#245c3c']));
  }
  // Water, then the ground.
  if (pal.water && setting === 'beach') {
    c.out.push(`<rect y="${f(horizonY)}" width="${w}" height="${f(h * 0.3)}" fill="${pal.water}"/>`);
    c.out.push(`<path d="M 0 ${f(horizonY + h * 0.22)} Q ${f(w * 0.5)} ${f(horizonY + h * 0.17)} ${w} ${f(horizonY + h * 0.24)} L ${w} ${h} L 0 ${h} Z" fill="${pal.ground}"/>`);
  } else if (setting === 'desert') {
    c.out.push(`<path d="M 0 ${f(horizonY)} Q ${f(w * 0.3)} ${f(horizonY - h * 0.06)} ${f(w * 0.6)} ${f(horizonY)} T ${w} ${f(horizonY)} L ${w} ${h} L 0 ${h} Z" fill="${pal.ground}"/>`);
  } else c.out.push(`<rect y="${f(horizonY)}" width="${w}" height="${f(h - horizonY)}" fill="${pal.ground}"/>`);
  if (setting === 'ocean') {
    for (let k = 0; k < 12; k++) {
      const y = horizonY + (h - horizonY) * rng.next();
      const x = rng.next() * w;
      c.out.push(`<path d="M ${f(x)} ${f(y)} q ${f(u * 2)} ${f(-u)} ${f(u * 4)} 0 t ${f(u * 4)} 0" fill="none" stroke="#cdefff" stroke-width="${f(u * 0.4)}" opacity="0.7"/>`);
    }
  }
  // Texture strokes: grass, sand grains, snowflakes (the detail the quality asks for).
  for (let k = 0; k < c.detail.texture; k++) {
    const x = rng.next() * w;
    if (setting === 'snow' || setting === 'night') {
      c.out.push(`<circle cx="${f(x)}" cy="${f(rng.next() * h)}" r="${f(u * 0.3)}" fill="#ffffff" opacity="0.7"/>`);
    } else {
      const y = horizonY + rng.next() * (h - horizonY);
      c.out.push(`<line x1="${f(x)}" y1="${f(y)}" x2="${f(x + u * (rng.next() - 0.5))}" y2="${f(y - u * 1.2)}" stroke="${pal.groundDark}" stroke-width="${f(u * 0.25)}" opacity="0.8"/>`);
    }
  }
}

/** Where each object of a region goes: spread across the width, a side keeps its third. */
function slots(c: Ctx, list: { object: SceneObject; index: number }[], yFrom: number, yTo: number): { x: number; y: number; object: SceneObject }[] {
  const out: { x: number; y: number; object: SceneObject }[] = [];
  list.forEach(({ object }, k) => {
    const n = list.length;
    const [lo, hi] = object.side === 'left' ? [0.04, 0.38] : object.side === 'right' ? [0.62, 0.96] : object.side === 'center' ? [0.35, 0.65] : [0.06, 0.94];
    const t = object.side ? (list.filter((o) => o.object.side === object.side).findIndex((o) => o === list[k]) + 0.5) / Math.max(1, list.filter((o) => o.object.side === object.side).length) : (k + 0.5) / n;
    const x = c.w * (lo + (hi - lo) * t) + (c.rng.next() - 0.5) * (c.w / (n + 1)) * 0.4;
    const y = yFrom + (yTo - yFrom) * c.rng.next();
    out.push({ x, y, object });
  });
  return out;
}

export interface DrawOptions {
  width: number;
  height: number;
  quality: ImageQuality;
  seed: number;
  /** Objects only, on a transparent background (what an edit draws over the picture). */
  overlay?: boolean;
}

/** The SVG of a scene at exactly width x height pixels. */
export function drawScene(scene: Scene, opts: DrawOptions): string {
  const { width: w, height: h } = opts;
  const c: Ctx = { w, h, u: Math.min(w, h) / 100, rng: mulberry32(opts.seed), detail: DETAIL[opts.quality], out: [] };
  const pal = PALETTES[scene.setting];
  if (!opts.overlay) drawSetting(c, scene, pal);
  const horizonY = Math.min(pal.horizon, 0.7) * h;
  // Each object once per count, grouped by region.
  const regions = { sky: [] as { object: SceneObject; index: number }[], ground: [] as { object: SceneObject; index: number }[], horizon: [] as { object: SceneObject; index: number }[], free: [] as { object: SceneObject; index: number }[], water: [] as { object: SceneObject; index: number }[] };
  for (const object of scene.objects) for (let i = 0; i < object.count; i++) regions[OBJECT_KINDS[object.kind]].push({ object, index: i });
  const colourOf = (object: SceneObject) => object.colour ?? c.rng.pick(DEFAULT_COLOURS[object.kind]);
  const base = Math.min(w, h);
  // Mountains behind everything else on the ground.
  for (const { x, y, object } of slots(c, regions.horizon, horizonY, horizonY + base * 0.02)) MOTIFS[object.kind](c, x, y, base * (0.22 + c.rng.next() * 0.12), colourOf(object));
  for (const { x, y, object } of slots(c, regions.sky, h * 0.08, horizonY * 0.7)) {
    const s = object.kind === 'rainbow' ? base * 0.35 : base * (0.1 + c.rng.next() * 0.08);
    MOTIFS[object.kind](c, x, y, s, colourOf(object));
  }
  const waterTop = scene.setting === 'beach' ? pal.horizon * h : horizonY;
  const waterBottom = scene.setting === 'beach' ? waterTop + h * 0.2 : h * 0.95;
  for (const { x, y, object } of slots(c, regions.water, waterTop + h * 0.04, waterBottom)) MOTIFS[object.kind](c, x, y, base * (0.1 + c.rng.next() * 0.06), colourOf(object));
  // Ground objects: farther (higher) ones first and smaller.
  const ground = slots(c, regions.ground, horizonY + (h - horizonY) * 0.3, h * 0.95).sort((a, b) => a.y - b.y);
  for (const { x, y, object } of ground) {
    const depth = (y - horizonY) / Math.max(1, h - horizonY);
    const size = { tree: 0.3, house: 0.28, cat: 0.16, dog: 0.16, flower: 0.1, car: 0.2, person: 0.22 }[object.kind as string] ?? 0.15;
    MOTIFS[object.kind](c, x, y, base * size * (0.7 + depth * 0.6), colourOf(object));
  }
  for (const { x, y, object } of slots(c, regions.free, h * 0.3, h * 0.7)) MOTIFS[object.kind](c, x, y, base * (0.18 + c.rng.next() * 0.1), colourOf(object));
  // Colours named but taken by no object tint the whole picture.
  scene.colours.slice(0, 3).forEach((col) => c.out.push(`<rect width="${w}" height="${h}" fill="${col}" opacity="${opts.overlay ? 0 : 0.16}"/>`));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">${c.out.join('')}</svg>`;
}
