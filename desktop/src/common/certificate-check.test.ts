import { describe, expect, it } from 'vitest';
import { checkAgainstCertificate, endpointProblem, parseEndpoints } from './certificate-check';

describe('chain endpoints the user enters on the verify screen', () => {
  it('takes https anywhere and http on loopback only', () => {
    expect(endpointProblem('https://sepolia.base.org')).toBeNull();
    expect(endpointProblem('http://127.0.0.1:8545')).toBeNull();
    expect(endpointProblem('http://localhost:3999')).toBeNull();
    expect(endpointProblem('http://rpc.example')).toBe('insecure');
    expect(endpointProblem('http://10.0.0.5:8545')).toBe('insecure');
    expect(endpointProblem('ws://127.0.0.1:8546')).toBe('scheme');
    expect(endpointProblem('https://user:key@rpc.example')).toBe('credentials');
    expect(endpointProblem('https://rpc.example/?apikey=1')).toBe('credentials');
    expect(endpointProblem('rpc.example')).toBe('not-url');
  });

  it('reads one per line or comma-separated, trims, drops trailing slashes, blanks and duplicates', () => {
    expect(
      parseEndpoints(' https://a.example/ \n\nhttps://b.example,https://a.example\n http://127.0.0.1:8545 '),
    ).toEqual({ urls: ['https://a.example', 'https://b.example', 'http://127.0.0.1:8545'], refused: null });
    expect(parseEndpoints('')).toEqual({ urls: [], refused: null });
    expect(parseEndpoints('https://a.example\nhttp://rpc.example')).toEqual({
      urls: ['https://a.example'],
      refused: { value: 'http://rpc.example', problem: 'insecure' },
    });
  });
});

describe('checkAgainstCertificate', () => {
  it('says a PDF without receipt (or a non-PDF) carries none, without asking any endpoint', async () => {
    const asked: string[] = [];
    const fetchSpy: typeof fetch = async (input) => {
      asked.push(String(input));
      throw new Error('no endpoint may be asked');
    };
    const result = await checkAgainstCertificate(
      new Uint8Array([1, 2, 3]),
      new TextEncoder().encode('not a pdf at all'),
      { evmRpcUrls: ['https://rpc.example'], stacksApiUrls: [] },
      { fetch: fetchSpy },
    );
    expect(result.kind).toBe('no-receipt');
    expect(asked).toEqual([]);
  });
});
