import { describe, expect, it } from 'vitest';
import { fileNameFromDisposition, jwtTimes } from './client';
import { ClientError, clientErrorFrom, errorFromResponse, kindForStatus, retryAfterFrom } from './errors';

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('client helpers', () => {
  it('reads exp and iat of a JWT without verifying it', () => {
    const jwt = `${b64url({ alg: 'ES256' })}.${b64url({ exp: 2000, iat: 1700, sub: 'ü' })}.sig`;
    expect(jwtTimes(jwt)).toEqual({ exp: 2000, iat: 1700 });
    expect(() => jwtTimes('garbage')).toThrow(ClientError);
  });

  it.each([
    ['attachment; filename="certificado-ACME-7K2M9Q4XTB.pdf"', 'certificado-ACME-7K2M9Q4XTB.pdf'],
    ['attachment; filename="x.pdf"; filename*=UTF-8\'\'certid%C3%A3o%20%E2%84%961.pdf', 'certidão №1.pdf'],
    ['attachment; filename=ACME-7K2M9Q4XTB.tsr', 'ACME-7K2M9Q4XTB.tsr'],
    ['attachment; filename="a \\"quoted\\" name.pdf"', 'a "quoted" name.pdf'],
    [null, 'fallback.pdf'],
    ['attachment', 'fallback.pdf'],
  ])('file name of Content-Disposition %s', (header, expected) => {
    expect(fileNameFromDisposition(header, 'fallback.pdf')).toBe(expected);
  });
});

describe('errors', () => {
  it.each([
    [400, undefined, 'bad-request'],
    [400, 'INVALID_OTP', 'invalid-code'],
    [403, 'TOO_MANY_ATTEMPTS', 'too-many-attempts'],
    [403, 'INVALID_ORIGIN', 'origin'],
    [401, undefined, 'session-expired'],
    [403, 'FORBIDDEN', 'forbidden'],
    [404, undefined, 'not-found'],
    [410, 'GONE', 'gone'],
    [413, 'PAYLOAD_TOO_LARGE', 'too-large'],
    [429, 'RATE_LIMITED', 'rate-limited'],
    [502, undefined, 'bad-gateway'],
    [503, undefined, 'unavailable'],
    [500, undefined, 'server'],
  ])('HTTP %s (%s) is %s', (status, code, kind) => {
    expect(kindForStatus(status, code)).toBe(kind);
  });

  it('keeps the server message and the Retry-After of a 429', () => {
    const headers = new Headers({ 'retry-after': '42' });
    const e = errorFromResponse(429, { message: 'Too many uploads', code: 'RATE_LIMITED' }, headers);
    expect(e.toJSON()).toEqual({
      kind: 'rate-limited',
      message: 'Too many uploads',
      status: 429,
      retryAfterSeconds: 42,
    });
    expect(retryAfterFrom(new Headers({ 'x-retry-after': '7' }))).toBe(7);
  });

  it('recognizes the CORS refusal of a foreign origin', () => {
    const e = errorFromResponse(403, {
      message: 'Origin http://x is not allowed (ALLOWED_ORIGINS)',
      code: 'FORBIDDEN',
    });
    expect(e.kind).toBe('origin');
  });

  it('survives the trip through IPC as plain data', () => {
    const e = new ClientError({ kind: 'too-large', message: 'big', status: 413 });
    const back = clientErrorFrom(structuredClone(e.toJSON()));
    expect(back).toBeInstanceOf(ClientError);
    expect(back.toJSON()).toEqual(e.toJSON());
    expect(clientErrorFrom({ kind: 'not-a-kind', message: 1 }).toJSON()).toEqual({
      kind: 'server',
      message: 'Unknown error',
    });
  });
});
