// Images the moderation tests draw (sharp, from SVG and raw pixels): nothing is read
// from disk or the network.
import zlib from 'node:zlib';
import sharp from 'sharp';

/** An SVG document on a white background. */
export const svg = (body: string, w = 400, h = 300) =>
  Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="white"/>${body}</svg>`);

/** A plain line drawing: a zigzag and a circle, black on white, as PNG. */
export const lineDrawingPng = () =>
  sharp(svg('<path d="M20 250 L120 50 L220 200 L380 40" stroke="black" stroke-width="4" fill="none"/><circle cx="300" cy="200" r="50" stroke="black" stroke-width="3" fill="none"/>')).png().toBuffer();

/** A flat colour, from raw pixels, as JPEG. */
export const flatColourJpeg = () => sharp({ create: { width: 320, height: 200, channels: 3, background: { r: 40, g: 120, b: 200 } } }).jpeg().toBuffer();

/** An image as a data URL. */
export const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;

/** A PNG whose header claims width x height, with next to no pixel data behind it. */
export function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(zlib.crc32(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.alloc(16))), chunk('IEND', Buffer.alloc(0))]);
}
