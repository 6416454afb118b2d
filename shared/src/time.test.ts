import { describe, expect, it } from 'vitest';
import { brasiliaWallClock, formatBrasiliaAndUtc, formatBrasiliaDate, withBrasiliaTimes } from './time';

const at = (iso: string) => new Date(iso);

describe('Brasília time from the IANA database (America/Sao_Paulo through Intl)', () => {
  it('an event of January 2018 is daylight saving time, UTC−02:00; one of July 2026 UTC−03:00', () => {
    expect(brasiliaWallClock(at('2018-01-15T12:00:00Z'))).toEqual({
      date: '2018-01-15',
      time: '10:00:00',
      offsetMinutes: -120,
      offset: 'UTC\u221202:00',
    });
    expect(brasiliaWallClock(at('2026-07-01T12:00:00Z'))).toMatchObject({
      time: '09:00:00',
      offset: 'UTC\u221203:00',
    });
  });

  it('daylight saving began at 00:00 on 2018-11-04: the clock jumps from 23:59:59 to 01:00:00', () => {
    expect(brasiliaWallClock(at('2018-11-04T02:59:59Z'))).toMatchObject({
      date: '2018-11-03',
      time: '23:59:59',
      offsetMinutes: -180,
    });
    expect(brasiliaWallClock(at('2018-11-04T03:00:00Z'))).toMatchObject({
      date: '2018-11-04',
      time: '01:00:00',
      offsetMinutes: -120,
    });
  });

  it('daylight saving ended at 00:00 on 2019-02-17 (the last time): 23:xx of the 16th happens twice', () => {
    expect(brasiliaWallClock(at('2019-02-17T01:59:59Z'))).toMatchObject({
      date: '2019-02-16',
      time: '23:59:59',
      offsetMinutes: -120,
    });
    expect(brasiliaWallClock(at('2019-02-17T02:00:00Z'))).toMatchObject({
      date: '2019-02-16',
      time: '23:00:00',
      offsetMinutes: -180,
    });
    // No daylight saving since: the summer of 2019/2020 stays at UTC−03:00.
    expect(brasiliaWallClock(at('2020-01-15T12:00:00Z')).offsetMinutes).toBe(-180);
  });

  it('the date in Brasília can be the day before the UTC date', () => {
    expect(formatBrasiliaDate(at('2026-07-01T02:30:00Z'), 'pt')).toBe('30/06/2026');
    expect(formatBrasiliaDate(at('2026-07-01T02:30:00Z'), 'en')).toBe('2026-06-30');
  });
});

describe('formatBrasiliaAndUtc', () => {
  it('labels both times and writes the offset out, per language', () => {
    expect(formatBrasiliaAndUtc(at('2018-01-15T12:00:00Z'), 'pt')).toBe(
      '15/01/2018 10:00:00 (horário de Brasília, UTC\u221202:00) · 2018-01-15 12:00:00 UTC',
    );
    expect(formatBrasiliaAndUtc(at('2018-01-15T12:00:00Z'), 'en')).toBe(
      '2018-01-15 10:00:00 Brasília time (UTC\u221202:00) · 2018-01-15 12:00:00 UTC',
    );
  });

  it('truncates to the second unless asked for milliseconds', () => {
    const t = at('2026-07-01T12:00:00.999Z');
    expect(formatBrasiliaAndUtc(t, 'en')).toBe(
      '2026-07-01 09:00:00 Brasília time (UTC\u221203:00) · 2026-07-01 12:00:00 UTC',
    );
    expect(formatBrasiliaAndUtc(t, 'en', { milliseconds: true })).toBe(
      '2026-07-01 09:00:00.999 Brasília time (UTC\u221203:00) · 2026-07-01 12:00:00.999 UTC',
    );
  });

  it('refuses an invalid date', () => {
    expect(() => formatBrasiliaAndUtc(new Date('nope'), 'pt')).toThrow(RangeError);
  });
});

describe('withBrasiliaTimes', () => {
  it('rewrites each RFC 3339 UTC time of a text, keeping milliseconds only when not zero', () => {
    expect(withBrasiliaTimes('trusted at 2018-01-15T12:00:00.000Z', 'en')).toBe(
      'trusted at 2018-01-15 10:00:00 Brasília time (UTC\u221202:00) · 2018-01-15 12:00:00 UTC',
    );
    expect(withBrasiliaTimes('2026-07-01T12:00:00.250Z (receipt 2026-07-01T12:00:00Z).', 'pt')).toBe(
      '01/07/2026 09:00:00.250 (horário de Brasília, UTC\u221203:00) · 2026-07-01 12:00:00.250 UTC ' +
        '(receipt 01/07/2026 09:00:00 (horário de Brasília, UTC\u221203:00) · 2026-07-01 12:00:00 UTC).',
    );
  });

  it('leaves times inside URLs and query strings, and what is no time, as written', () => {
    const text =
      'see https://x.example/t/2018-01-15T12:00:00Z and ?at=2018-01-15T12:00:00Z, 2018-13-45T99:00:00Z';
    expect(withBrasiliaTimes(text, 'en')).toBe(text);
  });
});
