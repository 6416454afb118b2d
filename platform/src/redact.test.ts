import { errorMessage } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log';
import {
  isKeyLikeSegment,
  REDACTED,
  redactDeep,
  redactError,
  redactText,
  redactUrl,
  secretsOfUrl,
  urlSecrets,
} from './redact';

const HEX32 = '0123456789abcdef0123456789abcdef';
const HEX40 = `${HEX32}01234567`;
const HEX64 = `${HEX32}${HEX32}`;
const ALCHEMY = 'Xq3vR9bT2mLk8NwPz4Yc7HdF1sJg6UeA';
const UUID = '4b7c9e2a-1f3d-4c5b-8a6e-9d0f1e2a3b4c';

describe('redactUrl: each provider shape loses its key, keeps host and structure', () => {
  it.each([
    [
      'Alchemy',
      `https://eth-mainnet.g.alchemy.com/v2/${ALCHEMY}`,
      'https://eth-mainnet.g.alchemy.com/v2/***',
    ],
    [
      'Alchemy (old domain)',
      `https://eth-sepolia.alchemyapi.io/v2/${ALCHEMY}`,
      'https://eth-sepolia.alchemyapi.io/v2/***',
    ],
    [
      'Alchemy, key of letters only',
      'https://base-sepolia.g.alchemy.com/v2/abcdefabcdefabcdefabcdefabcdefab',
      'https://base-sepolia.g.alchemy.com/v2/***',
    ],
    ['Infura', `https://mainnet.infura.io/v3/${HEX32}`, 'https://mainnet.infura.io/v3/***'],
    ['Infura websocket', `wss://sepolia.infura.io/ws/v3/${HEX32}`, 'wss://sepolia.infura.io/ws/v3/***'],
    [
      'Infura with secret',
      `https://:s3cr3tSecretValue@mainnet.infura.io/v3/${HEX32}`,
      'https://***@mainnet.infura.io/v3/***',
    ],
    [
      'QuickNode',
      `https://black-flying-sun.quiknode.pro/${HEX40}/`,
      'https://black-flying-sun.quiknode.pro/***/',
    ],
    [
      'QuickNode network',
      `https://x.ethereum-sepolia.quiknode.pro/${HEX40}/`,
      'https://x.ethereum-sepolia.quiknode.pro/***/',
    ],
    ['Ankr', `https://rpc.ankr.com/eth_sepolia/${HEX64}`, 'https://rpc.ankr.com/eth_sepolia/***'],
    ['Blast', `https://eth-mainnet.blastapi.io/${UUID}`, 'https://eth-mainnet.blastapi.io/***'],
    [
      'Chainstack node',
      `https://nd-123-456-789.p2pify.com/${HEX32}`,
      'https://nd-123-456-789.p2pify.com/***',
    ],
    [
      'Chainstack core',
      `https://ethereum-mainnet.core.chainstack.com/${HEX32}`,
      'https://ethereum-mainnet.core.chainstack.com/***',
    ],
    [
      'Chainstack basic auth',
      'https://user-name:pass-word-1234@nd-123-456-789.p2pify.com',
      'https://***@nd-123-456-789.p2pify.com',
    ],
    [
      'dRPC query',
      `https://lb.drpc.org/ogrpc?network=ethereum&dkey=${ALCHEMY}`,
      'https://lb.drpc.org/ogrpc?network=***&dkey=***',
    ],
    ['dRPC path', `https://lb.drpc.org/ethereum/${ALCHEMY}`, 'https://lb.drpc.org/ethereum/***'],
    [
      'Hiro Platform',
      `https://api.platform.hiro.so/v1/ext/${HEX32}/stacks-blockchain-api`,
      'https://api.platform.hiro.so/v1/ext/***/stacks-blockchain-api',
    ],
    [
      'Hiro, short key',
      'https://api.platform.hiro.so/v1/ext/Key9/stacks-blockchain-api',
      'https://api.platform.hiro.so/v1/ext/***/stacks-blockchain-api',
    ],
    [
      'apikey query',
      'https://api.etherscan.io/api?module=proxy&apikey=ABC',
      'https://api.etherscan.io/api?module=***&apikey=***',
    ],
    [
      'bare query token and fragment',
      'https://node.example/rpc?TOKEN#frag',
      'https://node.example/rpc?***#***',
    ],
    ['user:pass on any host', 'http://alice:hunter22@10.0.0.5:8545/', 'http://***@10.0.0.5:8545/'],
    [
      'generic base58 path key',
      'https://rpc.example.org/v1/3yZe7d8Q1kW9mPqR4sT6uVx',
      'https://rpc.example.org/v1/***',
    ],
    ['generic hex path key', `https://rpc.example.org/${HEX32}`, 'https://rpc.example.org/***'],
  ])('%s', (_name, url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it.each([
    'http://127.0.0.1:8545',
    'https://api.testnet.hiro.so',
    'https://api.hiro.so/extended/v1/tx/0x6f1e4a9d0c3b2a1f6f1e4a9d0c3b2a1f6f1e4a9d0c3b2a1f6f1e4a9d0c3b2a1f',
    'https://api.hiro.so/extended/v1/address/ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM/nonces',
    'https://sepolia.base.org',
    'https://rpc.example.org/rpc/ethereum-sepolia',
    'not a url at all',
  ])('%s stays as it is', (url) => {
    expect(redactUrl(url)).toBe(url);
  });

  it('a key-like segment: long hex or mixed token, not 0x values or Stacks addresses', () => {
    expect(isKeyLikeSegment(HEX32)).toBe(true);
    expect(isKeyLikeSegment(UUID)).toBe(true);
    expect(isKeyLikeSegment(`0x${HEX64}`)).toBe(false);
    expect(isKeyLikeSegment('ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM')).toBe(false);
    expect(isKeyLikeSegment('stacks-blockchain-api')).toBe(false);
  });
});

describe('redactText', () => {
  it('redacts every URL of an ethers error message, punctuation around it kept', () => {
    const url = `https://eth-mainnet.g.alchemy.com/v2/${ALCHEMY}`;
    const message =
      `server response 401 Unauthorized (request={  }, response={  }, error=null, info={ "requestUrl": "${url}", ` +
      `"responseBody": "{\\"error\\":\\"bad key\\"}", "responseStatus": "401 Unauthorized" }, code=SERVER_ERROR) (see ${url}).`;
    const out = redactText(message);
    expect(out).not.toContain(ALCHEMY);
    expect(out).toContain('"requestUrl": "https://eth-mainnet.g.alchemy.com/v2/***"');
    expect(out).toMatch(/\(see https:\/\/eth-mainnet\.g\.alchemy\.com\/v2\/\*\*\*\)\.$/);
  });

  it("hides a configured URL's key where a node echoes it without the URL", () => {
    const url = `https://mainnet.infura.io/v3/${HEX32}`;
    expect(urlSecrets(url)).toContain(HEX32);
    expect(redactText(`invalid project id ${HEX32}`, urlSecrets(url))).toBe(`invalid project id ${REDACTED}`);
    // Percent-encoded credentials are hidden decoded too.
    const secrets = urlSecrets('https://bob:p%40ss-word@node.example/');
    expect(redactText('auth failed for p@ss-word', secrets)).toBe(`auth failed for ${REDACTED}`);
  });

  it('text without URLs or secrets comes back as it was', () => {
    expect(redactText('nonce too low: next nonce 7, tx nonce 5')).toBe(
      'nonce too low: next nonce 7, tx nonce 5',
    );
  });
});

describe('secretsOfUrl: every piece of a configured URL is a secret for its messages', () => {
  /** What an adapter's message about its endpoint may say: the URL and the node's own echo of pieces of it. */
  const echo = (url: string, piece: string) =>
    `POST ${url} failed: connect ECONNREFUSED (the node said: unknown key ${piece}; see ${url}/status)`;

  it.each([
    ['a short all-letter path segment', 'https://node.example.org/rpc/hushkey', 'hushkey'],
    ['a percent-encoded path segment', 'https://node.example.org/v1/k%2Fe%3Dy-%C3%A9t%C3%A9', 'k/e=y-été'],
    [
      'a percent-encoded path segment, as written',
      'https://node.example.org/v1/k%2Fe%3Dy-%C3%A9t%C3%A9',
      'k%2Fe%3Dy-%C3%A9t%C3%A9',
    ],
    ['a matrix parameter', 'https://node.example.org/rpc;apikey=mtrxkey', 'mtrxkey'],
    ['an unknown provider subdomain', 'https://acct7781.nodes.unknownprovider.net/', 'acct7781'],
    ['a subdomain under a country second level', 'https://tenantname.tsa.example.gov.br/tsa', 'tenantname'],
    ['the user of the userinfo', 'https://operator:pw@node.example.org/', 'operator'],
    ['a percent-encoded password', 'https://op:p%40ssw@node.example.org/', 'p@ssw'],
    ['a query value', 'https://node.example.org/?token=qval', 'qval'],
    ['a fragment', 'https://node.example.org/#fragkey', 'fragkey'],
  ])('%s', (_name, url, piece) => {
    const out = redactText(echo(url, piece), secretsOfUrl(url));
    expect(out).not.toContain(piece);
    expect(out).toContain(REDACTED);
  });

  it('a short parameter value is hidden after its name only, anywhere in the text', () => {
    const url = 'https://node.example.org/rpc;apikey=k1?key=ab';
    const text = `calling /rpc;apikey=k1 with key=ab; k1 and ab are words too (apikey=k1x stays)`;
    expect(redactText(text, secretsOfUrl(url))).toBe(
      `calling /rpc;apikey=${REDACTED} with key=${REDACTED}; k1 and ab are words too (apikey=k1x stays)`,
    );
  });

  it('keeps the registrable domain, the TLD, public labels, short pieces and the port', () => {
    const url = 'https://www.api-gw.example.co.uk:8443/v2/rpc';
    const { pieces } = secretsOfUrl(url);
    expect(pieces).toContain('api-gw');
    for (const kept of ['www', 'example', 'co', 'uk', 'v2', 'rpc', '8443'])
      expect(pieces).not.toContain(kept);
    expect(secretsOfUrl('http://127.0.0.1:8545/').pieces).toEqual([]);
    expect(secretsOfUrl('http://[::1]:8545/').pieces).toEqual([]);
    expect(secretsOfUrl('not a url').pieces).toEqual([]);
    expect(
      redactText(
        'Stacks API https://api.mainnet.example.com/v2/info',
        secretsOfUrl('https://api.mainnet.example.com'),
      ),
    ).toBe('Stacks API https://api.mainnet.example.com/v2/info');
  });

  it('urlSecrets lists the same pieces, and plain strings still work as secrets', () => {
    const url = 'https://hushacct.example.com/keyseg';
    expect(urlSecrets(url)).toEqual(expect.arrayContaining(['hushacct', 'keyseg']));
    expect(redactText('bad keyseg', urlSecrets(url))).toBe(`bad ${REDACTED}`);
  });

  it('redactUrl hides matrix parameter values on any host, without a configured URL', () => {
    expect(redactUrl('https://node.example.org/rpc;apikey=abc;v=1/x')).toBe(
      'https://node.example.org/rpc;apikey=***;v=***/x',
    );
  });
});

describe('redactError and redactDeep', () => {
  /** An error shaped as ethers 6 makes them: the URL in the message and in `info`, the request attached. */
  function ethersLikeError(url: string): Error {
    const e = new Error(`server response 403 Forbidden (info={ "requestUrl": "${url}" }, code=SERVER_ERROR)`);
    Object.assign(e, {
      code: 'SERVER_ERROR',
      info: { requestUrl: url, responseStatus: '403 Forbidden' },
      request: { url },
    });
    e.cause = new TypeError(`fetch ${url} failed`);
    return e;
  }

  it('redactError keeps name, code and cause, redacted; drops every other field', () => {
    const url = `https://rpc.ankr.com/eth/${HEX64}`;
    const out = redactError(ethersLikeError(url));
    expect(out.message).toContain('https://rpc.ankr.com/eth/***');
    const short = 'https://node.example.org/rpc;apikey=abc/hushkey';
    const configured = redactError(ethersLikeError(short), secretsOfUrl(short));
    expect(`${configured.message}${configured.stack}${errorMessage(configured.cause)}`).not.toMatch(
      /abc|hushkey/,
    );
    expect(out.stack).not.toContain(HEX64);
    expect((out as Error & { code?: string }).code).toBe('SERVER_ERROR');
    expect(Object.keys(out)).toEqual(['code']);
    expect(errorMessage(out.cause)).toBe('fetch https://rpc.ankr.com/eth/*** failed');
    expect(redactError(`plain ${url}`).message).toBe('plain https://rpc.ankr.com/eth/***');
  });

  it('redactDeep walks objects, arrays and errors; cycles end', () => {
    const url = `https://x.quiknode.pro/${HEX40}/`;
    const value: Record<string, unknown> = { a: [url, { b: url }], err: new Error(url), n: 1 };
    value.self = value;
    const text = JSON.stringify(redactDeep(value));
    expect(text).not.toContain(HEX40);
    expect(text).toContain('"n":1');
  });

  it('a log line of an ethers-like error carries no key (message, stack, info, cause)', () => {
    const url = `https://eth-mainnet.g.alchemy.com/v2/${ALCHEMY}?apikey=${HEX32}`;
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      format: 'json',
      destination: { write: (l: string) => lines.push(l) },
    });
    log.error({ err: ethersLikeError(url) }, 'anchoring failed');
    log.error(ethersLikeError(url), 'anchoring failed again');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).not.toContain(ALCHEMY);
      expect(line).not.toContain(HEX32);
      expect(line).toContain('eth-mainnet.g.alchemy.com/v2/***');
    }
  });
});
