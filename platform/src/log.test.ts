import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, type LogLevel, lifecycleLogger, logFormatFor } from './log';

/** A JSON logger at `level` and the parsed lines it wrote. */
function capture(level: LogLevel) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level,
    format: 'json',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { log, lines };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createLogger', () => {
  it.each([
    ['debug', ['d', 'i', 'w', 'e']],
    ['info', ['i', 'w', 'e']],
    ['warn', ['w', 'e']],
    ['error', ['e']],
    ['silent', []],
  ] as const)('LOG_LEVEL=%s writes %j', (level, expected) => {
    const { log, lines } = capture(level);
    const child = log.child({ module: 'anchor' });
    child.debug('d');
    child.info('i');
    child.warn('w');
    child.error('e');
    expect(lines.map((l) => l.msg)).toEqual(expected);
    for (const line of lines) expect(line.module).toBe('anchor');
  });

  it('lifecycle lines are written at every level, silent included; debug stays with LOG_LEVEL', () => {
    for (const level of ['warn', 'error', 'silent'] as const) {
      const { log, lines } = capture(level);
      const notary = lifecycleLogger(log, 'notary');
      notary.debug('hidden');
      notary.info('[notary] listening on http://127.0.0.1:1');
      log.info('not a lifecycle line');
      expect(lines.map((l) => l.msg)).toEqual(['[notary] listening on http://127.0.0.1:1']);
      expect(lines[0]?.module).toBe('notary');
    }
    const { log, lines } = capture('debug');
    lifecycleLogger(log, 'notary').debug('shown');
    expect(lines.map((l) => l.msg)).toEqual(['shown']);
  });

  it('JSON in production, readable text elsewhere', () => {
    expect(logFormatFor('production')).toBe('json');
    expect(logFormatFor('development')).toBe('text');
    expect(logFormatFor('test')).toBe('text');
  });

  it('text: the message, its plain fields and the error stack, through the console method of the level', () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const log = createLogger({ level: 'debug', format: 'text' }).child({ module: 'jobs' });
    log.debug('[certificate] d1: separate certificate (bound)');
    log.info({ reqId: 'r1', responseTime: 3, req: { headers: {} } }, 'GET / 200');
    log.warn('[notary] warning: RATE_LIMITS=off');
    log.error({ err: new Error('pg down') }, '[jobs] pg-boss error');
    expect(debug).toHaveBeenCalledWith('[certificate] d1: separate certificate (bound)');
    expect(info).toHaveBeenCalledWith('[jobs] GET / 200 reqId=r1 responseTime=3');
    expect(warn).toHaveBeenCalledWith('[notary] warning: RATE_LIMITS=off');
    expect(error.mock.calls[0]?.[0]).toMatch(/^\[jobs\] pg-boss error\nError: pg down\n\s+at /);
  });

  it('text: the module field reads as the prefix of a message that has none', () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const log = createLogger({ level: 'info', format: 'text' }).child({ module: 'anchor' });
    log.child({ chain: 'evm' }).info({ batch: 'b1', documents: 3 }, 'batch collected');
    createLogger({ level: 'info', format: 'text' }).info('no module');
    expect(info.mock.calls).toEqual([
      ['[anchor] batch collected chain=evm batch=b1 documents=3'],
      ['no module'],
    ]);
  });

  it('text on stderr (a CLI whose stdout is its product): every level through console.error', () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    createLogger({ level: 'info', format: 'text', stream: 'stderr' }).info('mail: to=a@example.com');
    expect(info).not.toHaveBeenCalled();
    expect(error).toHaveBeenCalledWith('mail: to=a@example.com');
  });
});
