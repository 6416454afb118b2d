import { afterEach, describe, expect, it } from 'vitest';
import { formatDate, formatDateTime } from './format';
import { translator } from './i18n';

const savedZone = process.env.TZ;
afterEach(() => {
  process.env.TZ = savedZone;
});

describe("the client's times: Brasília time and UTC, whatever this computer's time zone", () => {
  it('a document registered on 2018-01-15 shows UTC−02:00 (daylight saving then), in both languages', () => {
    // A computer set to another zone shows the same text: the screens never use the local zone.
    for (const zone of ['Asia/Tokyo', 'America/Sao_Paulo', 'UTC']) {
      process.env.TZ = zone;
      expect(formatDateTime('2018-01-15T12:00:00.000Z', 'pt')).toBe(
        '15/01/2018 10:00:00 (horário de Brasília, UTC\u221202:00) · 2018-01-15 12:00:00 UTC',
      );
      expect(formatDateTime('2018-01-15T12:00:00.000Z', 'en')).toBe(
        '2018-01-15 10:00:00 Brasília time (UTC\u221202:00) · 2018-01-15 12:00:00 UTC',
      );
    }
  });

  it('a time of 2026-07-01 shows UTC−03:00; the table day is the day in Brasília', () => {
    expect(formatDateTime('2026-07-01T12:00:00Z', 'pt')).toContain(
      '01/07/2026 09:00:00 (horário de Brasília, UTC\u221203:00)',
    );
    expect(formatDate('2026-07-01T02:00:00Z', 'pt')).toBe('30/06/2026');
    expect(formatDate('2026-07-01T02:00:00Z', 'en')).toBe('2026-06-30');
  });

  it('none is a dash; what is not a time is shown as it came', () => {
    expect(formatDateTime(null, 'pt')).toBe('—');
    expect(formatDateTime('soon', 'en')).toBe('soon');
    expect(formatDate('soon', 'en')).toBe('soon');
  });

  it("the judging date's help says the chosen time in Brasília time and UTC", () => {
    const t = translator('pt');
    expect(t('verify.cert.atUtc', { at: formatDateTime('2019-02-17T01:59:59.000Z', 'pt') })).toBe(
      'Ou seja: 16/02/2019 23:59:59 (horário de Brasília, UTC\u221202:00) · 2019-02-17 01:59:59 UTC',
    );
  });
});
