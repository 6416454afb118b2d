import { describe, expect, it } from 'vitest';
import { checkCaptureUrl, isCaptureUrl, screenshotSrc } from '../common/capture-url';
import { ClientError, errorFromResponse } from '../common/errors';
import { captureErrorText, captureRecord, captureRequest, captureUrlProblemText } from './capture';
import { translator } from './i18n';

const en = translator('en');
const pt = translator('pt');

describe('page address check (before any request)', () => {
  it.each([
    'https://example.com',
    'http://example.com/a/b?c=d#e',
    'https://exemplo.com.br:8443/página',
    'HTTPS://EXAMPLE.COM/',
    'http://203.0.113.7/',
  ])('accepts %s', (url) => {
    expect(checkCaptureUrl(url)).toEqual({ ok: true, url });
    expect(isCaptureUrl(url)).toBe(true);
  });

  it('ignores white space around a pasted address, not inside it', () => {
    expect(checkCaptureUrl('  https://example.com/a \n')).toEqual({ ok: true, url: 'https://example.com/a' });
    expect(isCaptureUrl(' https://example.com/a')).toBe(false);
    expect(checkCaptureUrl('https://example.com/a b')).toMatchObject({ ok: false, problem: 'invalid' });
  });

  it.each([
    ['nothing', '  ', 'empty'],
    ['a bare host', 'example.com/page', 'no-scheme'],
    ['a host with a port', 'example.com:8080/page', 'no-scheme'],
    ['localhost with a port', 'localhost:3000', 'no-scheme'],
    ['ftp', 'ftp://example.com/file', 'scheme'],
    ['file', 'file:///etc/passwd', 'scheme'],
    ['javascript', 'javascript:alert(1)', 'scheme'],
    ['data', 'data:text/html,<h1>x</h1>', 'scheme'],
    ['mailto', 'mailto:ana@example.com', 'scheme'],
    ['user and password', 'https://user:pass@example.com/', 'credentials'],
    ['a user name only', 'http://user@example.com/', 'credentials'],
    ['no host', 'https://', 'invalid'],
    ['words', 'not a url', 'invalid'],
    ['an 8193-character address', `https://example.com/${'a'.repeat(8173)}`, 'too-long'],
  ])('refuses %s', (_what, input, problem) => {
    expect(checkCaptureUrl(input)).toMatchObject({ ok: false, problem });
    expect(isCaptureUrl(input)).toBe(false);
  });

  it('suggests https:// for a bare public host', () => {
    expect(checkCaptureUrl('example.com/page')).toEqual({
      ok: false,
      problem: 'no-scheme',
      suggestion: 'https://example.com/page',
    });
    expect(checkCaptureUrl('localhost:3000')).toEqual({ ok: false, problem: 'no-scheme' });
  });

  it('says what is wrong, in both languages', () => {
    const say = (input: string) => [
      captureUrlProblemText(en, checkCaptureUrl(input)),
      captureUrlProblemText(pt, checkCaptureUrl(input)),
    ];
    expect(say('ftp://example.com')).toEqual([
      'Only http:// or https:// pages can be captured.',
      'Só páginas http:// ou https:// podem ser capturadas.',
    ]);
    expect(say('example.com')[0]).toBe(
      'Start the address with http:// or https://, e.g. https://example.com/',
    );
    expect(say('https://u:p@example.com')[1]).toBe(
      'Tire o usuário e a senha do endereço: eles ficariam no arquivo.',
    );
    expect(say('')[0]).toBe('Enter the page’s address.');
    expect(say('https://example.com')).toEqual([null, null]);
  });
});

describe('the capture form', () => {
  it('sends the trimmed address, consent true, and the name only when one was given', () => {
    expect(captureRequest({ url: ' https://example.com/a ', name: '  ', consent: true })).toEqual({
      ok: true,
      request: { url: 'https://example.com/a', consent: true },
    });
    expect(captureRequest({ url: 'https://example.com', name: ' Página.wacz ', consent: true })).toEqual({
      ok: true,
      request: { url: 'https://example.com', consent: true, fileName: 'Página.wacz' },
    });
  });

  it('sends nothing without consent or with an address the check refuses', () => {
    expect(captureRequest({ url: 'https://example.com', name: '', consent: false })).toMatchObject({
      ok: false,
      needsConsent: true,
      url: { ok: true },
    });
    expect(captureRequest({ url: 'file:///etc/passwd', name: '', consent: true })).toMatchObject({
      ok: false,
      needsConsent: false,
      url: { ok: false, problem: 'scheme' },
    });
  });
});

describe('the record of a capture', () => {
  const doc = (screenshot: string | null, sourceType: 'web-capture' | 'upload' = 'web-capture') => ({
    serialNumber: 'CARTORIO-7K2M9Q4XTB',
    sourceType,
    sourceUri: 'https://example.com/a',
    screenshot,
  });

  it('shows the serial, the address and an http(s) screenshot', () => {
    const shot = 'https://s3.example/bucket/t1/abc?X-Amz-Signature=f00&X-Amz-Expires=300';
    expect(captureRecord(doc(shot))).toEqual({
      serial: 'CARTORIO-7K2M9Q4XTB',
      pageUrl: 'https://example.com/a',
      screenshot: shot,
    });
    expect(captureRecord(doc(shot, 'upload'))).toBeNull();
  });

  it.each([
    ['none', null],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:image/png;base64,iVBORw0KGgo='],
    ['file:', 'file:///etc/passwd'],
    ['with credentials', 'https://user:pass@s3.example/x.png'],
    ['not a URL', 'shot.png'],
  ])('shows no screenshot for %s', (_what, screenshot) => {
    expect(screenshotSrc(screenshot)).toBeNull();
    expect(captureRecord(doc(screenshot))?.screenshot).toBeNull();
  });
});

describe('sentences of the capture errors (spec, Errors)', () => {
  const sentence = (e: ClientError) => [
    captureErrorText(en, e, 'http://localhost:3000'),
    captureErrorText(pt, e, 'http://localhost:3000'),
  ];

  it.each([
    [
      '400 refused destination',
      errorFromResponse(400, { message: 'The destination 10.0.0.1 is not allowed', code: 'BAD_REQUEST' }),
      'The server refused the address: only http(s), without user name and password, to an allowed destination (not local or private).',
      'O servidor recusou o endereço: só http(s), sem usuário e senha, de um destino permitido (não local nem privado).',
    ],
    [
      '400 missing consent',
      errorFromResponse(400, { message: 'Consent is required', code: 'BAD_REQUEST' }),
      'The server requires the consent (LGPD) to capture.',
      'O servidor exige o consentimento (LGPD) para capturar.',
    ],
    [
      '403 role below editor',
      errorFromResponse(403, { message: 'Requires editor', code: 'FORBIDDEN' }),
      'Your role in this workspace does not allow capturing pages (editor or higher is needed).',
      'Seu papel neste espaço não permite capturar páginas (é preciso ser editor ou superior).',
    ],
    [
      '429 with Retry-After',
      errorFromResponse(
        429,
        { message: 'Too many', code: 'RATE_LIMITED' },
        new Headers({ 'retry-after': '23' }),
      ),
      'Too many captures (5 a minute) or the queue is full; try again in 23 s.',
      'Muitas capturas (5 por minuto) ou fila cheia; tente novamente em 23 s.',
    ],
    [
      '429 without a wait',
      errorFromResponse(429, { message: 'Capture queue full', code: 'RATE_LIMITED' }),
      'Too many captures (5 a minute) or the queue is full; wait a moment and try again.',
      'Muitas capturas (5 por minuto) ou fila cheia; aguarde um pouco e tente novamente.',
    ],
    [
      '502 site unreachable',
      errorFromResponse(502, { message: 'net::ERR_NAME_NOT_RESOLVED', code: 'BAD_GATEWAY' }),
      'The site could not be reached (DNS, connection or TLS); nothing was recorded.',
      'O site não pôde ser acessado (DNS, conexão ou TLS); nada foi registrado.',
    ],
    [
      '503 no Chromium',
      errorFromResponse(503, { message: 'No Chromium', code: 'SERVICE_UNAVAILABLE' }),
      'The server has no Chromium installed; capturing is not available.',
      'O servidor não tem o Chromium instalado; a captura não está disponível.',
    ],
    [
      '504 capture timed out',
      errorFromResponse(504, { message: 'Capture timed out', code: 'GATEWAY_TIMEOUT' }),
      'The capture took too long and was stopped; nothing was recorded.',
      'A captura demorou demais e foi interrompida; nada foi registrado.',
    ],
    [
      '404 of a server without the procedure',
      errorFromResponse(404, { message: 'No procedure found on path "documents.capture"' }),
      'This server does not offer web page capture.',
      'Este servidor não oferece captura de páginas web.',
    ],
  ])('%s', (_what, error, english, portuguese) => {
    expect(sentence(error)).toEqual([english, portuguese]);
  });

  it('keeps the usual sentences for the rest (offline, session expired)', () => {
    const offline = new ClientError({ kind: 'offline', message: 'Could not reach' });
    expect(captureErrorText(en, offline, 'http://localhost:3000')).toBe(
      'Could not reach the server at http://localhost:3000. Check that it is running and the address.',
    );
    expect(captureErrorText(en, errorFromResponse(401, {}), '')).toBe('Your session has expired.');
    expect(captureErrorText(en, 'not a client error', '')).toBeNull();
  });
});
