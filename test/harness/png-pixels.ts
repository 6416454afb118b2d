/**
 * Pixel counts of a PNG, decoded by Chromium itself (an image drawn on a canvas): for tests that check what a
 * screenshot shows without a PNG decoder of their own.
 */
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** How many pixels of `png` have exactly the colour `rgb`. */
export async function countPixels(png: Buffer, rgb: [number, number, number]): Promise<number> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--disable-gpu'] });
  try {
    const page = await browser.newPage();
    return await page.evaluate<number>(`(async () => {
      const img = new Image();
      img.src = 'data:image/png;base64,${png.toString('base64')}';
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.width;
      canvas.height = img.height;
      const ctx = canvas.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const data = ctx.getImageData(0, 0, img.width, img.height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4)
        if (data[i] === ${rgb[0]} && data[i + 1] === ${rgb[1]} && data[i + 2] === ${rgb[2]}) n++;
      return n;
    })()`);
  } finally {
    await browser.close();
  }
}
