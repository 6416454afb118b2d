import { describe, expect, it } from 'vitest';
import { ClientError } from '../common/errors';
import { translator } from './i18n';
import {
  humanDuration,
  isoDuration,
  limitRefusal,
  limitRefusalText,
  monitorRequest,
  runOutcomeText,
} from './monitor';

const form = {
  url: 'https://example.com/oferta',
  intervalAmount: '6',
  intervalUnit: 'hours' as const,
  periodAmount: '30',
  periodUnit: 'days' as const,
  consent: true,
};

describe('the monitoring form (durations in human units, sent as ISO 8601)', () => {
  it('writes each unit as an ISO 8601 duration', () => {
    expect(isoDuration(30, 'minutes')).toBe('PT30M');
    expect(isoDuration(6, 'hours')).toBe('PT6H');
    expect(isoDuration(30, 'days')).toBe('P30D');
    expect(isoDuration(2, 'weeks')).toBe('P2W');
    expect(isoDuration(0, 'hours')).toBeUndefined();
    expect(isoDuration(1.5, 'hours')).toBeUndefined();
  });

  it('builds the request and counts the runs (the first at once)', () => {
    expect(monitorRequest(form)).toEqual({
      ok: true,
      request: { url: 'https://example.com/oferta', interval: 'PT6H', period: 'P30D' },
      runs: 121,
    });
  });

  it.each([
    ['a period shorter than the interval', { periodAmount: '2', periodUnit: 'hours' as const }, 'shorter'],
    ['more than 10 000 runs', { intervalAmount: '1', intervalUnit: 'minutes' as const }, 'too-many-runs'],
    ['a period that is no whole number', { periodAmount: '1,5' }, 'invalid'],
  ])('refuses %s before sending', (_, change, period) => {
    expect(monitorRequest({ ...form, ...change })).toMatchObject({ ok: false, period });
  });

  it('refuses an interval of zero, an address that is no http(s) page, and a missing consent', () => {
    expect(monitorRequest({ ...form, intervalAmount: '0' })).toMatchObject({
      ok: false,
      interval: 'invalid',
    });
    expect(monitorRequest({ ...form, url: 'javascript:alert(1)' })).toMatchObject({
      ok: false,
      url: { ok: false, problem: 'scheme' },
    });
    expect(monitorRequest({ ...form, consent: false })).toMatchObject({ ok: false, needsConsent: true });
  });
});

describe("the operator's limits, as the server words them, in sentences", () => {
  const pt = translator('pt');
  const en = translator('en');
  const refusal = (kind: ClientError['kind'], message: string) => new ClientError({ kind, message });

  it('names the minimum interval and the maximum period in human units', () => {
    const min = limitRefusal(
      refusal(
        'bad-request',
        "The interval PT30M is shorter than this service's minimum of 3600 s (MONITOR_MIN_INTERVAL_SECONDS)",
      ),
    );
    expect(min).toEqual({ kind: 'min-interval', seconds: 3600 });
    expect(min && limitRefusalText(pt, min)).toBe(
      'O intervalo é menor que o mínimo deste serviço: no mínimo 1 hora entre capturas.',
    );
    expect(min && limitRefusalText(en, min)).toBe(
      "The interval is shorter than this service's minimum: at least 1 hour between captures.",
    );
    const max = limitRefusal(
      refusal(
        'bad-request',
        "The period P120D is longer than this service's maximum of 90 days (MONITOR_MAX_DAYS)",
      ),
    );
    expect(max).toEqual({ kind: 'max-period', days: 90 });
    expect(max && limitRefusalText(pt, max)).toBe(
      'O período é maior que o máximo deste serviço: no máximo 90 dias.',
    );
  });

  it('tells the quota and the most active monitorings apart, and leaves other errors to the generic text', () => {
    expect(limitRefusal(refusal('too-large', "This workspace's storage quota is full"))).toEqual({
      kind: 'quota',
    });
    expect(limitRefusal(refusal('rate-limited', 'already has 20 active monitorings'))).toEqual({
      kind: 'too-many-active',
    });
    expect(limitRefusal(refusal('rate-limited', 'Too many requests'))).toBeUndefined();
    expect(limitRefusal(refusal('bad-request', 'Invalid URL'))).toBeUndefined();
    expect(limitRefusal(new Error('boom'))).toBeUndefined();
  });

  it('says durations in the largest whole unit', () => {
    expect(humanDuration(pt, 86_400 * 14)).toBe('2 semanas');
    expect(humanDuration(en, 5400)).toBe('90 minutes');
    expect(humanDuration(en, 45)).toBe('45 seconds');
  });
});

describe('the timeline', () => {
  it('says a run was available, or the gap and its cause', () => {
    const en = translator('en');
    expect(runOutcomeText(en, { outcome: 'seen', cause: null, httpStatus: 200 })).toBe('Available');
    expect(runOutcomeText(en, { outcome: 'unavailable', cause: 'http-status', httpStatus: 404 })).toBe(
      'Unavailable: the server answered HTTP error 404',
    );
    expect(runOutcomeText(translator('pt'), { outcome: 'unavailable', cause: 'dns', httpStatus: null })).toBe(
      'Indisponível: o nome do servidor não foi resolvido (DNS)',
    );
  });
});
