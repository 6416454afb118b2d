const integerFormats = new Map<string, Intl.NumberFormat>();
const decimalFormats = new Map<string, Intl.NumberFormat>();

/** One `Intl.NumberFormat` per locale and digit count (building one is slow, and sizes are shown often). */
function numberFormat(
  cache: Map<string, Intl.NumberFormat>,
  locale: string,
  digits: number,
): Intl.NumberFormat {
  let format = cache.get(locale);
  if (!format) {
    format = new Intl.NumberFormat(locale, { maximumFractionDigits: digits });
    cache.set(locale, format);
  }
  return format;
}

/**
 * A size in bytes for people, exact first, then binary-prefixed (IEC 80000-13) from 1 KiB: `2.598.727 bytes
 * (2,5 MiB)` in `pt-BR`, `2,598,727 bytes (2.5 MiB)` in `en-US`, `512 bytes` below 1 KiB. `locale` is a BCP 47
 * tag. The certificate, the verifier page and the desktop client show sizes the same way.
 */
export function formatBytes(bytes: number, locale: string): string {
  const exact = `${numberFormat(integerFormats, locale, 0).format(bytes)} bytes`;
  if (bytes < 1024) return exact;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${exact} (${numberFormat(decimalFormats, locale, 1).format(value)} ${units[unit]})`;
}
