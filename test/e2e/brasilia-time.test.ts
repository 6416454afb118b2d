import * as shared from '@notary/shared/time';
import * as verifier from '@notary/verify/time';
import { describe, expect, it } from 'vitest';

/**
 * The verifier keeps its own copy of the time formatting (it is published without dependencies): both copies
 * must print every time the same, so the certificate, the client, the mails and `notary-verify` agree.
 */
describe('Brasília time: the shared helper and the verifier copy say the same', () => {
  // Every 7 hours and 13 minutes from 2017 to 2027: both daylight saving changes of each year until 2019.
  const step = (7 * 60 + 13) * 60_000;
  const instants: Date[] = [];
  for (let t = Date.UTC(2017, 0, 1); t < Date.UTC(2027, 0, 1); t += step) instants.push(new Date(t + 250));

  it('formats each instant alike, in both languages', () => {
    for (const at of instants) {
      for (const lang of ['pt', 'en'] as const) {
        expect(verifier.formatBrasiliaAndUtc(at, lang)).toBe(shared.formatBrasiliaAndUtc(at, lang));
        expect(verifier.formatBrasiliaAndUtc(at, lang, { milliseconds: true })).toBe(
          shared.formatBrasiliaAndUtc(at, lang, { milliseconds: true }),
        );
        expect(verifier.formatBrasiliaDate(at, lang)).toBe(shared.formatBrasiliaDate(at, lang));
      }
    }
  });

  it('rewrites times in text alike', () => {
    const text =
      'signed at 2018-11-04T03:00:00.000Z, thisUpdate 2019-02-17T01:59:59Z; https://x/2018-01-01T00:00:00Z';
    for (const lang of ['pt', 'en'] as const) {
      expect(verifier.withBrasiliaTimes(text, lang)).toBe(shared.withBrasiliaTimes(text, lang));
    }
  });
});
