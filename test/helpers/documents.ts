// Documents made for tests: a PDF with a text layer, one line of text per entry.
import { PDFDocument, StandardFonts } from 'pdf-lib';

export async function pdf(lines: string[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage();
  lines.forEach((line, i) => page.drawText(line, { x: 50, y: 750 - i * 20, size: 12, font }));
  return Buffer.from(await doc.save());
}
