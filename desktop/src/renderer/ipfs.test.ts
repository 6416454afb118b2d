import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkCid, cidOfSource, isBareCid } from '../common/cid';
import { isGatewayUrlOf } from '../common/client';
import { ClientError, errorFromResponse } from '../common/errors';
import { translator } from './i18n';
import { cidProblemText, ipfsImportErrorText, ipfsRequest } from './ipfs';

/*
 * CIDs are built here from their definition (github.com/multiformats/cid): CIDv0 = base58btc of the
 * sha2-256 multihash; CIDv1 = `b` + base32 (RFC 4648, lower case, unpadded) of
 * <version 1><codec><multihash>. Independent of the code under test, which only decodes.
 */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return bits > 0 ? out + BASE32[(buffer << (5 - bits)) & 31] : out;
}

function base58(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  return out;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();
const RAW = 0x55;
const DAG_PB = 0x70;
const DAG_CBOR = 0x71;
const cidV1 = (codec: number, digest: Uint8Array) =>
  `b${base32(Uint8Array.from([1, codec, 0x12, 0x20, ...digest]))}`;
const cidV0 = (digest: Uint8Array) => base58(Uint8Array.from([0x12, 0x20, ...digest]));

const HELLO = new TextEncoder().encode('hello world');
/** Published CIDs of `hello world` (raw leaf, as `ipfs add --cid-version 1 --raw-leaves` gives it). */
const HELLO_V1 = 'bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e';
/** Well-known CIDs of the IPFS docs: a dag-pb v1 and the v0 of the go-ipfs readme folder. */
const DAG_PB_V1 = 'bafybeigdyrzt5sxp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi';
const README_V0 = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG';

const en = translator('en');
const pt = translator('pt');

describe('CID shape check (before any request)', () => {
  it('builds the published CID of "hello world" the same way as the tests do', () => {
    expect(cidV1(RAW, sha256(HELLO))).toBe(HELLO_V1);
  });

  it.each([
    ['CIDv1 raw', HELLO_V1, 1],
    ['CIDv1 dag-pb', DAG_PB_V1, 1],
    ['CIDv0', README_V0, 0],
    ['CIDv0 of "hello world"', cidV0(sha256(HELLO)), 0],
  ])('accepts a %s', (_what, cid, version) => {
    expect(checkCid(cid)).toEqual({ ok: true, cid, version });
    expect(isBareCid(cid)).toBe(true);
  });

  it('accepts any sha2-256 digest as v0 and as v1 raw or dag-pb (200 random digests)', () => {
    for (let i = 0; i < 200; i += 1) {
      const digest = randomBytes(32);
      for (const cid of [cidV0(digest), cidV1(RAW, digest), cidV1(DAG_PB, digest)]) {
        expect(checkCid(cid), cid).toMatchObject({ ok: true, cid });
      }
    }
  });

  it('ignores white space around a pasted CID, not inside it', () => {
    expect(checkCid(`  ${HELLO_V1}\n`)).toEqual({ ok: true, cid: HELLO_V1, version: 1 });
    expect(isBareCid(` ${HELLO_V1}`)).toBe(false);
    expect(checkCid(`${HELLO_V1.slice(0, 20)} ${HELLO_V1.slice(20)}`)).toMatchObject({ ok: false });
  });

  it.each([
    ['nothing', '   ', 'empty'],
    ['ipfs:// URI', `ipfs://${HELLO_V1}`, 'path'],
    ['/ipfs/ path', `/ipfs/${HELLO_V1}`, 'path'],
    ['gateway URL', `https://ipfs.io/ipfs/${HELLO_V1}?filename=a.pdf`, 'path'],
    ['path inside a folder', `${DAG_PB_V1}/readme.md`, 'path'],
    ['IPNS name', 'ipns://docs.ipfs.tech', 'path'],
    ['upper-case base32 (multibase B)', `B${HELLO_V1.slice(1).toUpperCase()}`, 'uppercase'],
    ['upper case after b', `b${HELLO_V1.slice(1).toUpperCase()}`, 'uppercase'],
    ['base36 (k…)', 'k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8', 'other-base'],
    ['base58btc CIDv1 (z…)', 'zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA', 'other-base'],
    ['base16 CIDv1 (f…)', `f01551220${Buffer.from(sha256(HELLO)).toString('hex')}`, 'other-base'],
    ['truncated CIDv0', README_V0.slice(0, -1), 'v0'],
    ['CIDv0 with a 0 (not base58)', `${README_V0.slice(0, -1)}0`, 'v0'],
    ['truncated CIDv1', HELLO_V1.slice(0, -1), 'v1'],
    ['CIDv1 cut by a byte', HELLO_V1.slice(0, -2), 'v1'],
    ['CIDv1 with a character not in base32', `${HELLO_V1.slice(0, -1)}1`, 'v1'],
    [
      'base32 of a v0 multihash (version byte 0x12)',
      `b${base32(Uint8Array.from([0x12, 0x20, ...sha256(HELLO)]))}`,
      'v1',
    ],
    [
      'CIDv1 with a longer digest than declared',
      `b${base32(Uint8Array.from([1, RAW, 0x12, 0x20, ...sha256(HELLO), 7]))}`,
      'v1',
    ],
    ['CID of dag-cbor data', cidV1(DAG_CBOR, sha256(HELLO)), 'codec'],
    [
      'CID with a blake2b-256 multihash',
      `b${base32(Uint8Array.from([1, RAW, 0xa0, 0xe4, 0x02, 0x20, ...sha256(HELLO)]))}`,
      'hash',
    ],
    [
      'CID with a truncated sha2-256 (16 bytes)',
      `b${base32(Uint8Array.from([1, RAW, 0x12, 0x10, ...sha256(HELLO).subarray(0, 16)]))}`,
      'hash',
    ],
    ['a SHA-256 in hex', Buffer.from(sha256(HELLO)).toString('hex'), 'unknown'],
    ['garbage', 'not a cid', 'unknown'],
    ['a 1 MB string', `b${'a'.repeat(1024 * 1024)}`, 'unknown'],
  ])('refuses %s', (_what, input, problem) => {
    expect(checkCid(input)).toMatchObject({ ok: false, problem });
    expect(isBareCid(input)).toBe(false);
  });

  it('suggests the bare CID found inside a path or URL', () => {
    expect(checkCid(`https://dweb.link/ipfs/${HELLO_V1}?filename=x`)).toEqual({
      ok: false,
      problem: 'path',
      suggestion: HELLO_V1,
    });
    expect(checkCid(`ipfs://${README_V0}`)).toMatchObject({ suggestion: README_V0 });
    expect(checkCid(`ipfs://${HELLO_V1.slice(0, -1)}`)).toEqual({ ok: false, problem: 'path' });
  });

  it('says what is wrong, in both languages', () => {
    const say = (input: string) => [cidProblemText(en, checkCid(input)), cidProblemText(pt, checkCid(input))];
    expect(cidProblemText(en, checkCid(HELLO_V1))).toBeNull();
    expect(say('nonsense')).toEqual([
      'Not a CID: use a CIDv0 (Qm…) or a CIDv1 in base32 (b…).',
      'Não é um CID: use um CIDv0 (Qm…) ou um CIDv1 em base32 (b…).',
    ]);
    expect(say(`ipfs://${HELLO_V1}`)[0]).toBe(
      `Enter the bare CID, without ipfs:// or a gateway address: ${HELLO_V1}`,
    );
    expect(say(README_V0.slice(0, 30))[0]).toBe(
      'A CIDv0 is "Qm" followed by 44 base58 characters; this one is incomplete or altered.',
    );
    expect(say('k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8')[1]).toContain('base32 (b…)');
    expect(say(cidV1(DAG_CBOR, sha256(HELLO)))[0]).toBe(
      'This CID names IPLD data, not a file: use the CID of a file.',
    );
    expect(say('')[1]).toBe('Informe o CID do arquivo.');
  });
});

describe('the import form', () => {
  it('sends the trimmed CID, consent true, and the name only when one was given', () => {
    expect(ipfsRequest({ cid: ` ${HELLO_V1} `, name: '  ', consent: true })).toEqual({
      ok: true,
      request: { cid: HELLO_V1, consent: true },
    });
    expect(ipfsRequest({ cid: README_V0, name: ' Contrato.pdf ', consent: true })).toEqual({
      ok: true,
      request: { cid: README_V0, consent: true, fileName: 'Contrato.pdf' },
    });
  });

  it('sends nothing without consent or with a CID the check refuses', () => {
    expect(ipfsRequest({ cid: HELLO_V1, name: '', consent: false })).toMatchObject({
      ok: false,
      needsConsent: true,
      cid: { ok: true },
    });
    expect(ipfsRequest({ cid: `/ipfs/${HELLO_V1}`, name: '', consent: true })).toMatchObject({
      ok: false,
      needsConsent: false,
      cid: { ok: false, problem: 'path' },
    });
  });
});

describe('imported documents: CID and gateway link', () => {
  it('reads the CID of an IPFS import from its sourceUri, and none for other sources', () => {
    expect(cidOfSource({ sourceType: 'ipfs', sourceUri: `ipfs://${HELLO_V1}` })).toBe(HELLO_V1);
    expect(cidOfSource({ sourceType: 'ipfs', sourceUri: `ipfs://${README_V0}` })).toBe(README_V0);
    expect(cidOfSource({ sourceType: 'upload', sourceUri: `ipfs://${HELLO_V1}` })).toBeNull();
    expect(cidOfSource({ sourceType: 'ipfs', sourceUri: null })).toBeNull();
    expect(cidOfSource({ sourceType: 'ipfs', sourceUri: 'ipfs://not-a-cid' })).toBeNull();
  });

  it('hands on a gateway link only when it is http(s), without credentials, and names the CID', () => {
    const ok = [
      `https://ipfs.io/ipfs/${HELLO_V1}?filename=contrato.pdf`,
      `http://127.0.0.1:8080/ipfs/${HELLO_V1}?filename=a&download=true`,
      `https://gw.example/base/ipfs/${HELLO_V1}/`,
    ];
    for (const url of ok) expect(isGatewayUrlOf(url, HELLO_V1), url).toBe(true);
    const refused = [
      `https://ipfs.io/ipfs/${DAG_PB_V1}?filename=${HELLO_V1}`,
      `https://ipfs.io/ipfs/${HELLO_V1}x`,
      `https://ipfs.io/ipfs/${HELLO_V1}/other.pdf`,
      `https://user:pass@ipfs.io/ipfs/${HELLO_V1}`,
      `javascript:alert('/ipfs/${HELLO_V1}')`,
      `file:///ipfs/${HELLO_V1}`,
      'not a url',
    ];
    for (const url of refused) expect(isGatewayUrlOf(url, HELLO_V1), url).toBe(false);
  });
});

describe('sentences of the import errors (spec, Errors)', () => {
  const headers = (h: Record<string, string> = {}) => new Headers(h);
  const sentence = (e: ClientError) => [
    ipfsImportErrorText(en, e, 'http://localhost:3000'),
    ipfsImportErrorText(pt, e, 'http://localhost:3000'),
  ];

  it.each([
    [
      '400 invalid CID',
      errorFromResponse(400, { message: 'cid: a bare CID v0 (Qm…) or v1 base32 (b…)', code: 'BAD_REQUEST' }),
      'The server refused the CID: only the CID of a file (not of a folder), CIDv0 (Qm…) or CIDv1 in base32 (b…).',
      'O servidor recusou o CID: só o CID de um arquivo (não de uma pasta), CIDv0 (Qm…) ou CIDv1 em base32 (b…).',
    ],
    [
      '400 missing consent',
      errorFromResponse(400, { message: 'Consent is required', code: 'BAD_REQUEST' }),
      'The server requires the consent (LGPD) to import.',
      'O servidor exige o consentimento (LGPD) para importar.',
    ],
    [
      '403 role below editor',
      errorFromResponse(403, { message: 'Requires editor', code: 'FORBIDDEN' }),
      'Your role in this workspace does not allow importing documents (editor or higher is needed).',
      'Seu papel neste espaço não permite importar documentos (é preciso ser editor ou superior).',
    ],
    [
      '413 over 250 MB',
      errorFromResponse(413, { message: 'File exceeds 250 MB', code: 'PAYLOAD_TOO_LARGE' }),
      'The file on IPFS exceeds the 250 MB limit; nothing was recorded.',
      'O arquivo no IPFS excede o limite de 250 MB; nada foi registrado.',
    ],
    [
      '429 with Retry-After',
      errorFromResponse(429, { message: 'Too many', code: 'RATE_LIMITED' }, headers({ 'retry-after': '37' })),
      'Too many imports; try again in 37 s.',
      'Muitas importações; tente novamente em 37 s.',
    ],
    [
      '429 with the wait in the body only',
      errorFromResponse(429, { message: 'Too many', code: 'RATE_LIMITED', retryAfterSeconds: 12 }),
      'Too many imports; try again in 12 s.',
      'Muitas importações; tente novamente em 12 s.',
    ],
    [
      '429 without a wait',
      errorFromResponse(429, { message: 'Too many', code: 'RATE_LIMITED' }),
      'Too many imports; wait a moment and try again.',
      'Muitas importações; aguarde um pouco e tente novamente.',
    ],
    [
      '502 gateway failure',
      errorFromResponse(502, { message: 'block bafk… does not match its CID', code: 'BAD_GATEWAY' }),
      'The IPFS gateway failed or returned content that does not match the CID; nothing was recorded.',
      'O gateway IPFS falhou ou devolveu um conteúdo que não corresponde ao CID; nada foi registrado.',
    ],
    [
      '404 of a server without the procedure',
      errorFromResponse(404, { message: 'No procedure found on path "documents.importIpfs"' }),
      'This server does not offer IPFS import.',
      'Este servidor não oferece importação do IPFS.',
    ],
  ])('%s', (_what, error, english, portuguese) => {
    expect(sentence(error)).toEqual([english, portuguese]);
  });

  it('keeps the usual sentences for the rest (offline, session expired)', () => {
    const offline = new ClientError({ kind: 'offline', message: 'Could not reach' });
    expect(ipfsImportErrorText(en, offline, 'http://localhost:3000')).toBe(
      'Could not reach the server at http://localhost:3000. Check that it is running and the address.',
    );
    expect(ipfsImportErrorText(en, errorFromResponse(401, {}), '')).toBe('Your session has expired.');
    expect(ipfsImportErrorText(en, 'not a client error', '')).toBeNull();
  });
});
