import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readJsonLine } from './process-pipes';

describe('readJsonLine (the capture process reading its setup, then its request)', () => {
  it('reads two lines that arrive in one chunk, one per call', async () => {
    const stdin = new PassThrough();
    stdin.write('{"setup":1}\n{"request":2}\n');
    expect(await readJsonLine(stdin, 1024)).toEqual({ setup: 1 });
    expect(await readJsonLine(stdin, 1024)).toEqual({ request: 2 });
  });

  it('reads a line split across chunks after one that came whole', async () => {
    const stdin = new PassThrough();
    stdin.write('{"setup":1}\n{"requ');
    expect(await readJsonLine(stdin, 1024)).toEqual({ setup: 1 });
    const request = readJsonLine(stdin, 1024);
    stdin.write('est":2}\n');
    expect(await request).toEqual({ request: 2 });
  });

  it('refuses a line past its bound, and a channel that ends before the line', async () => {
    const long = new PassThrough();
    long.write(`${'x'.repeat(2048)}\n`);
    await expect(readJsonLine(long, 1024)).rejects.toThrow('larger than 1024 bytes');
    const ended = new PassThrough();
    ended.end('{"setup":1}\n');
    expect(await readJsonLine(ended, 1024)).toEqual({ setup: 1 });
    await expect(readJsonLine(ended, 1024)).rejects.toThrow('ended before the request');
  });
});
