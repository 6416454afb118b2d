import { parseAllowList } from '@notary/platform/net/address-policy';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FixtureProvider, startFixtureProvider } from '../../test-support/fixture-provider.testing';
import { allowProviders } from '../../test-support/harness.testing';
import { MAX_PROVIDER_BODY_BYTES, ProviderEgress, type Resolver } from './egress';
import { GeoIndicaRestConnector } from './geo-indica-rest';
import { ProviderError } from './http-client';

/**
 * The SSRF guard against real loopback servers. Every URL here is loopback: refusals are proven by the target server
 * never seeing a request. The public case is the classifier's unit test (platform's net/address-policy.test.ts), never
 * a connection.
 */
let allowed: FixtureProvider;
let other: FixtureProvider;
const egresses: ProviderEgress[] = [];

const CATEGORIES = [{ slug: 'a', name: 'Categoria A' }];
const DEFINITIONS = [{ id: 'D1', name: 'Definição 1', category: 'a' }];

function egress(allowHosts: string, resolve?: Resolver): ProviderEgress {
  const e = new ProviderEgress(parseAllowList(allowHosts), resolve ? { resolve } : {});
  egresses.push(e);
  return e;
}

const connector = (baseUrl: string, e: ProviderEgress, retries = 2) =>
  new GeoIndicaRestConnector(baseUrl, { timeoutMs: 10_000, retries, maxPages: 10, egress: e });

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a ProviderError');
    },
    (e: unknown) => {
      expect(e).toBeInstanceOf(ProviderError);
      return e as ProviderError;
    },
  );

beforeAll(async () => {
  allowed = await startFixtureProvider({ categories: CATEGORIES, definitions: DEFINITIONS });
  other = await startFixtureProvider({ categories: CATEGORIES, definitions: DEFINITIONS });
});
afterAll(async () => {
  await allowed?.close();
  await other?.close();
});
beforeEach(() => {
  for (const p of [allowed, other]) {
    p.behavior = () => ({ kind: 'normal' });
    p.requests.length = 0;
    p.streams.length = 0;
  }
});
afterEach(async () => {
  await Promise.all(egresses.splice(0).map((e) => e.close()));
});

describe('connect-time address checks', () => {
  it('refuses a provider on 127.0.0.1 that is not allow-listed, before any byte reaches it', async () => {
    const port = new URL(allowed.url).port;
    const error = await failure(connector(allowed.url, egress('')).categories());
    expect(error.message).toBe(
      `refused: 127.0.0.1:${port} is a loopback address: not allowed (an operator can list it in CATALOG_PROVIDER_ALLOW_HOSTS)`,
    );
    expect(allowed.requests).toEqual([]);
  });

  it('allows it with its exact 127.0.0.1:<port>, and only that port', async () => {
    const e = egress(allowProviders(allowed.url));
    const walk = await connector(allowed.url, e).categories();
    expect(walk.items.map((c) => c.slug)).toEqual(['a']);
    const error = await failure(connector(other.url, e).categories());
    expect(error.message).toMatch(/is a loopback address: not allowed/);
    expect(other.requests).toEqual([]);
  });

  it('refuses a host name that resolves to loopback (localhost), checked when connecting', async () => {
    const port = new URL(allowed.url).port;
    const error = await failure(connector(`http://localhost:${port}`, egress('')).categories());
    expect(error.message).toMatch(new RegExp(`^refused: localhost:${port} resolves to a loopback address`));
    expect(allowed.requests).toEqual([]);
  });

  it('refuses DNS rebinding: public when registered, loopback when connecting', async () => {
    const port = new URL(allowed.url).port;
    let lookups = 0;
    // Answers a public address once (the registration check), then 127.0.0.1 for ever: nothing public is
    // ever connected to.
    const rebinding: Resolver = async () =>
      lookups++ === 0 ? [{ address: '93.184.215.14', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    const e = egress('', rebinding);
    expect(await e.checkUrl(`http://rebind.test:${port}/`)).toBeUndefined();
    const error = await failure(connector(`http://rebind.test:${port}`, e).categories());
    expect(error.message).toMatch(/rebind\.test:\d+ resolves to a loopback address/);
    expect(lookups).toBe(2);
    expect(allowed.requests).toEqual([]);
  });

  it('refuses a name whose addresses mix public and private', async () => {
    const mixed: Resolver = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '8.8.8.8', family: 4 },
    ];
    const port = new URL(allowed.url).port;
    const error = await failure(connector(`http://mixed.test:${port}`, egress('', mixed)).categories());
    expect(error.message).toMatch(/resolves to a loopback address/);
  });

  it('refuses the odd spellings of loopback an URL parser accepts', async () => {
    const port = new URL(allowed.url).port;
    for (const host of ['2130706433', '0x7f.1', '127.1', '[::ffff:127.0.0.1]', '[::1]', '0.0.0.0']) {
      const error = await failure(connector(`http://${host}:${port}`, egress('')).categories());
      expect(error.message, host).toMatch(/is an? (loopback|unspecified) address/);
    }
    expect(allowed.requests).toEqual([]);
  });

  it('checks registration URLs the same way (literal, resolved, scheme)', async () => {
    const e = egress('127.0.0.1:4000');
    expect(await e.checkUrl('http://127.0.0.1:4000/')).toBeUndefined();
    expect(await e.checkUrl('http://127.0.0.1:4001/')).toMatch(/127\.0\.0\.1:4001 is a loopback address/);
    expect(await e.checkUrl('http://localhost:4001/')).toMatch(/localhost:4001 resolves to a loopback/);
    expect(await e.checkUrl('http://169.254.169.254/latest/meta-data/')).toBe(
      '169.254.169.254:80 is a cloud metadata address: never allowed',
    );
    expect(await e.checkUrl('http://[fd00:ec2::254]/')).toMatch(/cloud metadata/);
    expect(await e.checkUrl('http://10.1.2.3:8080/')).toMatch(/is a private address/);
    expect(await e.checkUrl('ftp://example.org/')).toBe('scheme ftp: is not http(s)');
  });
});

describe('redirects', () => {
  it('follows a redirect within the allowed provider; the source URL is the last hop', async () => {
    allowed.behavior = (r) =>
      r.query.hop === undefined && r.path.startsWith('/indicators/by-geocode')
        ? { kind: 'redirect', location: `${r.path}?indicator=D1&hop=1` }
        : { kind: 'normal' };
    const answer = await connector(allowed.url, egress(allowProviders(allowed.url))).valuesByGeocode(
      '3550308',
      { indicatorId: 'D1', limit: 3 },
    );
    expect(answer.values).toHaveLength(3);
    expect(answer.sourceUrl).toBe(`${allowed.url}/indicators/by-geocode/3550308?indicator=D1&hop=1`);
  });

  it('refuses a redirect from an allowed provider to a loopback port that is not allowed', async () => {
    allowed.behavior = () => ({ kind: 'redirect', location: `${other.url}/indicator-types?page=1` });
    const error = await failure(connector(allowed.url, egress(allowProviders(allowed.url))).categories());
    expect(error.message).toMatch(
      new RegExp(
        `^redirect to ${other.url.replace(/\./g, '\\.')} refused: 127\\.0\\.0\\.1:\\d+ is a loopback`,
      ),
    );
    expect(other.requests).toEqual([]);
    // Not retried: a refusal is final.
    expect(allowed.requests).toHaveLength(1);
  });

  it('refuses a redirect to a non-http(s) scheme and more than 5 redirects', async () => {
    const e = egress(allowProviders(allowed.url));
    allowed.behavior = () => ({ kind: 'redirect', location: 'file:///etc/passwd' });
    expect((await failure(connector(allowed.url, e).categories())).message).toBe(
      'redirect to a file: URL refused',
    );
    allowed.requests.length = 0;
    allowed.behavior = (r) => ({ kind: 'redirect', location: `${r.path}?page=${r.page + 1}`, status: 307 });
    expect((await failure(connector(allowed.url, e).categories())).message).toBe('more than 5 redirects');
    expect(allowed.requests).toHaveLength(6);
  });
});

describe('response bodies', () => {
  it(`cancels a chunked answer longer than ${MAX_PROVIDER_BODY_BYTES} bytes, without retrying`, async () => {
    allowed.behavior = () => ({ kind: 'stream', bytes: 64 * 1024 * 1024 });
    const error = await failure(connector(allowed.url, egress(allowProviders(allowed.url))).categories());
    expect(error.message).toBe(`answer longer than ${MAX_PROVIDER_BODY_BYTES} bytes: refused`);
    expect(allowed.streams).toHaveLength(1);
    const fate = await allowed.streams[0];
    expect(fate?.completed).toBe(false);
    expect(fate?.written).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a declared Content-Length over the cap before reading it', async () => {
    allowed.behavior = () => ({ kind: 'stream', bytes: 64 * 1024 * 1024, declareLength: true });
    const error = await failure(connector(allowed.url, egress(allowProviders(allowed.url))).categories());
    expect(error.message).toBe(`answer longer than ${MAX_PROVIDER_BODY_BYTES} bytes: refused`);
    expect((await allowed.streams[0])?.completed).toBe(false);
  });

  it('reads an answer of exactly the cap (then judges it as JSON)', async () => {
    allowed.behavior = () => ({ kind: 'stream', bytes: MAX_PROVIDER_BODY_BYTES });
    const error = await failure(connector(allowed.url, egress(allowProviders(allowed.url))).categories());
    expect(error.message).toBe('answered a body that is not JSON');
    expect((await allowed.streams[0])?.completed).toBe(true);
  });

  it('never puts the body of an error or a bad answer in the message', async () => {
    const secret = 'SECRET-BODY-7f3a <html>internal stack trace</html>';
    const e = egress(allowProviders(allowed.url));
    allowed.behavior = () => ({ kind: 'raw', status: 500, text: secret });
    const five = await failure(connector(allowed.url, e, 0).categories());
    expect(five.message).toBe('answered HTTP 500');
    allowed.behavior = () => ({ kind: 'raw', status: 200, text: secret });
    const notJson = await failure(connector(allowed.url, e, 0).categories());
    expect(notJson.message).toBe('answered a body that is not JSON');
    allowed.behavior = () => ({
      kind: 'body',
      body: { data: [{ slug: secret, name: { secret } }], pagination: { page: 1, totalPages: 1 } },
    });
    const contract = await failure(connector(allowed.url, e, 0).categories());
    expect(contract.message).toMatch(/^answer breaks the contract \(data\.0\.name: /);
    for (const m of [five.message, notJson.message, contract.message]) expect(m).not.toContain('SECRET');
  });
});
