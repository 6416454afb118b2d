import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorText, translator } from '../renderer/i18n';
import { jwtTimes, NotaryClient } from './client';
import { assertDerSequence, assertPdf, certificateFileName, timestampFileName } from './downloads';
import {
  ClientError,
  clientErrorFrom,
  errorFromResponse,
  kindForStatus,
  retryAfterFrom,
  retryAfterFromBody,
} from './errors';

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('client helpers', () => {
  it('reads exp and iat of a JWT without verifying it', () => {
    const jwt = `${b64url({ alg: 'ES256' })}.${b64url({ exp: 2000, iat: 1700, sub: 'ü' })}.sig`;
    expect(jwtTimes(jwt)).toEqual({ exp: 2000, iat: 1700 });
    expect(() => jwtTimes('garbage')).toThrow(ClientError);
  });
});

describe('downloads: names chosen by the client, bytes checked before anything is written', () => {
  it('names certificates and timestamps after the serial number, in the UI language', () => {
    expect(certificateFileName('ACME-7K2M9Q4XTB', 'pt')).toBe('certificado-ACME-7K2M9Q4XTB.pdf');
    expect(certificateFileName('ACME-7K2M9Q4XTB', 'en')).toBe('certificate-ACME-7K2M9Q4XTB.pdf');
    expect(timestampFileName('ACME-7K2M9Q4XTB')).toBe('ACME-7K2M9Q4XTB.tsr');
  });

  it.each([
    '../../evil.sh',
    'ACME-7K2M9Q4XTB/../../x',
    'ACME-7K2M9Q4XTB\\..\\x',
    'acme-7k2m9q4xtb',
    'ACME-7K2M9Q4XTB.sh',
    '',
  ])('never puts a serial that is not <PREFIX>-<CODE> (%j) into a name', (serial) => {
    expect(certificateFileName(serial, 'en')).toBe('certificate.pdf');
    expect(timestampFileName(serial)).toBe('timestamp.tsr');
  });

  it('accepts a PDF only when it starts with %PDF-', () => {
    expect(() => assertPdf(new TextEncoder().encode('%PDF-1.7\n'))).not.toThrow();
    for (const body of ['#!/bin/sh\nrm -rf ~\n', ' %PDF-1.7', '%PDF', '<html>%PDF-1.7', '']) {
      expect(() => assertPdf(new TextEncoder().encode(body))).toThrow(
        expect.objectContaining({ kind: 'invalid-content' }),
      );
    }
  });

  it.each([
    ['short form', [0x30, 0x03, 0x02, 0x01, 0x00]],
    ['long form, one length octet', [0x30, 0x81, 0x80, ...new Array(0x80).fill(0)]],
    ['long form, two length octets', [0x30, 0x82, 0x01, 0x00, ...new Array(0x100).fill(0)]],
  ])('accepts a DER SEQUENCE spanning the answer (%s)', (_what, bytes) => {
    expect(() => assertDerSequence(Uint8Array.from(bytes))).not.toThrow();
  });

  it.each([
    ['JSON', [...new TextEncoder().encode('{"ok":true}')]],
    ['a PDF', [...new TextEncoder().encode('%PDF-1.7')]],
    ['empty', []],
    ['a SET, not a SEQUENCE', [0x31, 0x00]],
    ['BER indefinite length', [0x30, 0x80, 0x00, 0x00]],
    ['truncated', [0x30, 0x05, 0x02, 0x01]],
    ['trailing bytes', [0x30, 0x00, 0x41]],
    ['a length over 4 octets', [0x30, 0x85, 1, 0, 0, 0, 0]],
  ])('refuses %s as a timestamp response', (_what, bytes) => {
    expect(() => assertDerSequence(Uint8Array.from(bytes))).toThrow(
      expect.objectContaining({ kind: 'invalid-content' }),
    );
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
    [507, 'INSUFFICIENT_STORAGE', 'unavailable'],
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

  it("reads a 429's wait from the body when no Retry-After came (REST body, tRPC error data)", () => {
    const body = { message: 'Too many requests', code: 'RATE_LIMITED', retryAfterSeconds: 17 };
    expect(errorFromResponse(429, body, new Headers()).retryAfterSeconds).toBe(17);
    // The header wins when both are there (the server sends both, equal).
    expect(errorFromResponse(429, body, new Headers({ 'retry-after': '9' })).retryAfterSeconds).toBe(9);
    expect(retryAfterFromBody({ retryAfterSeconds: 2.2 })).toBe(3);
    for (const odd of [{ retryAfterSeconds: '5' }, { retryAfterSeconds: -1 }, null, 'x', {}])
      expect(retryAfterFromBody(odd)).toBeUndefined();
    expect(errorFromResponse(503, body).retryAfterSeconds).toBeUndefined();
  });

  it('shows the wait: "Too many requests; try again in N s"', () => {
    const e = errorFromResponse(429, { message: 'x', code: 'RATE_LIMITED', retryAfterSeconds: 42 });
    expect(errorText(translator('en'), e, '')).toBe('Too many requests; try again in 42 s.');
    expect(errorText(translator('pt'), e, '')).toBe('Muitas solicitações; tente novamente em 42 s.');
    const unknownWait = new ClientError({ kind: 'rate-limited', message: 'x', status: 429 });
    expect(errorText(translator('en'), unknownWait, '')).toBe(
      'Too many requests; wait a moment and try again.',
    );
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

describe('NotaryClient: a tRPC 429 carries its wait in data.retryAfterSeconds', () => {
  let server: Server;
  let base: string;
  /** Headers of the next 429: with or without Retry-After. */
  let withHeader = false;

  beforeAll(async () => {
    // The tRPC error shape of the platform's formatter (platform/src/trpc/errors.ts), over httpLink.
    server = createServer((req, res) => {
      req.resume();
      const body = {
        error: {
          message: 'Too many requests (publicVerify limit): try again in 23 s',
          code: -32029,
          data: { code: 'RATE_LIMITED', httpStatus: 429, path: 'public.verify', retryAfterSeconds: 23 },
        },
      };
      res.writeHead(429, {
        'content-type': 'application/json',
        ...(withHeader ? { 'retry-after': '23' } : {}),
      });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['data.retryAfterSeconds alone', false],
    ['Retry-After and data', true],
  ])('%s', async (_what, header) => {
    withHeader = header;
    const client = new NotaryClient({ baseUrl: base, mode: 'cookie' });
    const error = await client.publicVerify('a'.repeat(64)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).toJSON()).toMatchObject({
      kind: 'rate-limited',
      status: 429,
      retryAfterSeconds: 23,
    });
    expect(errorText(translator('en'), error as ClientError, base)).toBe(
      'Too many requests; try again in 23 s.',
    );
    client.close();
  });
});
