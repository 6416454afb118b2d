import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fontkit, { type Font } from '@pdf-lib/fontkit';
import type { PDFDocument, PDFFont } from 'pdf-lib';

/**
 * The certificate's embedded TrueType fonts (DejaVu Sans, Sans Bold, Sans Mono from the `dejavu-fonts-ttf`
 * package): read and parsed once per process, embedded as subsets (only the glyphs used) in each document.
 */

export type FontRole = 'sans' | 'bold' | 'mono';

const FONT_FILES: Record<FontRole, string> = {
  sans: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
  mono: 'DejaVuSansMono.ttf',
};

/** The TTF bytes and the parsed fontkit font of one role. */
interface LoadedFont {
  bytes: Uint8Array;
  kit: Font;
}

let loaded: Record<FontRole, LoadedFont> | undefined;

/**
 * Reads and parses the three TTFs on first use (about 1.5 MB, synchronous: a one-time start-up cost), then
 * returns the cached fonts. Throws if the `dejavu-fonts-ttf` package is missing (a deployment error).
 */
function loadFonts(): Record<FontRole, LoadedFont> {
  if (loaded) return loaded;
  // The package has no `exports` field, so its files resolve by path.
  const require = createRequire(import.meta.url);
  const load = (file: string): LoadedFont => {
    const bytes = new Uint8Array(readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${file}`)));
    return { bytes, kit: fontkit.create(bytes) };
  };
  loaded = { sans: load(FONT_FILES.sans), bold: load(FONT_FILES.bold), mono: load(FONT_FILES.mono) };
  return loaded;
}

/** An embedded font of one document: the pdf-lib font (encoding, widths) and the parsed font (coverage). */
export interface FontFace {
  pdf: PDFFont;
  kit: Font;
}

export type FontSet = Record<FontRole, FontFace>;

type FontkitLike = Parameters<PDFDocument['registerFontkit']>[0];

/**
 * A fontkit front that hands pdf-lib the already parsed font for bytes it has seen, so that each document
 * does not parse 1.5 MB of TTF again (pdf-lib only reads from the font and creates a fresh subset per
 * document).
 */
const cachingFontkit: FontkitLike = {
  create(buffer: Uint8Array, postscriptName?: string) {
    const fonts = loadFonts();
    for (const role of ['sans', 'bold', 'mono'] as const) {
      if (fonts[role].bytes === buffer && postscriptName === undefined) return fonts[role].kit;
    }
    return fontkit.create(buffer, postscriptName);
  },
};

/**
 * Embeds the three fonts into `doc` as subsets; the glyphs are collected by `encodeText` and written by
 * `doc.flush()` / `doc.save()`. Registers fontkit on `doc`.
 */
export async function embedFonts(doc: PDFDocument): Promise<FontSet> {
  const fonts = loadFonts();
  doc.registerFontkit(cachingFontkit);
  const embed = async (role: FontRole): Promise<FontFace> => ({
    pdf: await doc.embedFont(fonts[role].bytes, { subset: true }),
    kit: fonts[role].kit,
  });
  return { sans: await embed('sans'), bold: await embed('bold'), mono: await embed('mono') };
}
