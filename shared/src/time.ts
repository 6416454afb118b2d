/**
 * Times as people read them: Brasília time first (acts, courts and notaries in Brazil read it), then UTC,
 * each labelled and with the offset written out, so a reader needs no knowledge of time zones:
 *
 * - pt: `15/01/2018 10:00:00 (horário de Brasília, UTC−02:00) · 2018-01-15 12:00:00 UTC`
 * - en: `2018-01-15 10:00:00 Brasília time (UTC−02:00) · 2018-01-15 12:00:00 UTC`
 *
 * Brasília time is the IANA zone `America/Sao_Paulo` as the runtime's ICU data has it (`Intl.DateTimeFormat`),
 * never an offset table of our own: Brazil kept daylight saving time until February 2019 (an event of
 * 2018-01-15 is UTC−02:00, one of 2026-07-01 UTC−03:00), and a future change arrives with the runtime's time
 * zone data. Machine data (receipt.json, the API, `--json` reports) stays RFC 3339 UTC; these functions are
 * for text a person reads. Runs in Node and in browsers alike (only `Intl`).
 *
 * `@notary/verify`, published without dependencies, keeps a copy in verifier/src/time.ts;
 * test/e2e/brasilia-time.test.ts holds both to the same output.
 */

/** The IANA time zone of Brasília time, Brazil's legal time for the acts of the service's readers. */
export const BRASILIA_TIME_ZONE = 'America/Sao_Paulo';

/** The languages people read times in. */
export type TimeLanguage = 'pt' | 'en';

/** An instant as a wall clock in Brasília: the date, the time and the offset from UTC that day. */
export interface BrasiliaWallClock {
  /** `2018-01-15` (ISO 8601 calendar date, in Brasília). */
  date: string;
  /** `10:00:00` (24-hour, in Brasília). */
  time: string;
  /** Minutes east of UTC (`-120` for UTC−02:00). */
  offsetMinutes: number;
  /** `UTC−02:00` (U+2212 MINUS SIGN, as ISO 8601 prefers for a negative offset; `+` east of UTC). */
  offset: string;
}

let wallClockFormat: Intl.DateTimeFormat | undefined;

/** One cached formatter (constructing an `Intl.DateTimeFormat` costs far more than formatting with it). */
function brasiliaFormat(): Intl.DateTimeFormat {
  wallClockFormat ??= new Intl.DateTimeFormat('en-US', {
    timeZone: BRASILIA_TIME_ZONE,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  return wallClockFormat;
}

/**
 * `at` as a wall clock in Brasília. The offset is the wall clock read as if it were UTC minus the instant
 * (whole seconds), so it comes from the same ICU data as the wall clock itself.
 * @throws RangeError when `at` is not a valid date.
 */
export function brasiliaWallClock(at: Date): BrasiliaWallClock {
  const parts: Record<string, string> = {};
  for (const part of brasiliaFormat().formatToParts(at)) parts[part.type] = part.value;
  const n = (type: string) => Number(parts[type]);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  const offsetMinutes = Math.round((wall - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
  const abs = Math.abs(offsetMinutes);
  const sign = offsetMinutes < 0 ? '\u2212' : '+';
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    time: `${parts.hour}:${parts.minute}:${parts.second}`,
    offsetMinutes,
    offset: `UTC${sign}${hhmm}`,
  };
}

/** Options of `formatBrasiliaAndUtc`. */
export interface TimeFormatOptions {
  /** Print the milliseconds (`10:00:00.250`) in both times: for times compared to the millisecond. */
  milliseconds?: boolean;
}

/**
 * `at` in Brasília time and in UTC, labelled, in `lang` (see the module comment for both forms). Seconds
 * are truncated, not rounded (as `toISOString` does), unless `options.milliseconds`.
 * @throws RangeError when `at` is not a valid date.
 */
export function formatBrasiliaAndUtc(at: Date, lang: TimeLanguage, options: TimeFormatOptions = {}): string {
  const local = brasiliaWallClock(at);
  const iso = at.toISOString();
  const fraction = options.milliseconds ? iso.slice(19, 23) : '';
  const utc = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction} UTC`;
  if (lang === 'pt') {
    const [y, m, d] = local.date.split('-');
    return `${d}/${m}/${y} ${local.time}${fraction} (horário de Brasília, ${local.offset}) · ${utc}`;
  }
  return `${local.date} ${local.time}${fraction} Brasília time (${local.offset}) · ${utc}`;
}

/** The calendar day of `at` in Brasília, for tables: `15/01/2018` (pt), `2018-01-15` (en). */
export function formatBrasiliaDate(at: Date, lang: TimeLanguage): string {
  const { date } = brasiliaWallClock(at);
  if (lang === 'en') return date;
  const [y, m, d] = date.split('-');
  return `${d}/${m}/${y}`;
}

/**
 * An RFC 3339 UTC time inside text (`2018-01-15T12:00:00Z`, `…12:00:00.000Z`), standing on its own: not
 * part of a URL, a path or a query string (the character before it is none of `\w / ? & = % . -`).
 */
const ISO_UTC_IN_TEXT = /(^|[^\w/?&=%.-])(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.(\d+))?Z)(?!\w)/g;

/**
 * `text` (a report's summary or evidence, written with RFC 3339 UTC times) with every such time replaced by
 * `formatBrasiliaAndUtc` in `lang`; milliseconds are kept when the text has a non-zero fraction. Anything
 * that is not a valid time is left as written.
 */
export function withBrasiliaTimes(text: string, lang: TimeLanguage): string {
  return text.replace(ISO_UTC_IN_TEXT, (whole, before: string, iso: string, fraction: string | undefined) => {
    const at = new Date(iso);
    if (Number.isNaN(at.getTime())) return whole;
    const milliseconds = fraction !== undefined && /[1-9]/.test(fraction);
    return `${before}${formatBrasiliaAndUtc(at, lang, { milliseconds })}`;
  });
}
