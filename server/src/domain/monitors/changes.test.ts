import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { pixelChange, textChange } from './changes';

/** A `width` × `height` white PNG with a black `box`. */
function png(width: number, height: number, box?: { x: number; y: number; w: number; h: number }): Buffer {
  const image = new PNG({ width, height });
  image.data.fill(255);
  if (box) {
    for (let y = box.y; y < box.y + box.h; y++) {
      for (let x = box.x; x < box.x + box.w; x++) image.data.set([0, 0, 0, 255], (y * width + x) * 4);
    }
  }
  return PNG.sync.write(image);
}

describe('textChange', () => {
  it('says nothing for the same lines, whatever the trailing spaces and blank lines', () => {
    expect(textChange('Oferta\nPreço: R$ 10', 'Oferta  \n\nPreço: R$ 10\n')).toBeNull();
  });

  it('lists the lines added and removed', () => {
    expect(textChange('Oferta\nPreço: R$ 10', 'Oferta\nPreço: R$ 12')).toEqual({
      addedLines: 1,
      removedLines: 1,
      lines: [
        { kind: 'removed', text: 'Preço: R$ 10' },
        { kind: 'added', text: 'Preço: R$ 12' },
      ],
      tooLarge: false,
    });
  });
});

describe('pixelChange', () => {
  it('finds no change between equal screenshots', () => {
    expect(pixelChange(png(40, 30), png(40, 30))).toMatchObject({ changedPixels: 0, share: 0, box: null });
  });

  it('measures the share changed and marks its box', () => {
    const change = pixelChange(png(40, 30), png(40, 30, { x: 10, y: 5, w: 4, h: 3 }));
    expect(change).toMatchObject({ changedPixels: 12, box: { x: 10, y: 5, width: 4, height: 3 } });
    expect(change?.share).toBeCloseTo(12 / 1200);
    const marked = PNG.sync.read(change?.marked ?? Buffer.alloc(0));
    expect([marked.width, marked.height]).toEqual([40, 30]);
  });

  it('counts a grown page as changed, and refuses what is not a PNG', () => {
    expect(pixelChange(png(40, 30), png(40, 40))).toMatchObject({ changedPixels: 400, totalPixels: 1600 });
    expect(pixelChange(Buffer.from('not a png'), png(4, 4))).toBeUndefined();
  });
});
