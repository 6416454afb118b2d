import { ConnectionException, DriverException } from '@mikro-orm/core';
import { describe, expect, it } from 'vitest';
import { databaseUnavailable } from './unavailable';

/** What PostgreSQL going away looks like to the service, and what must stay INTERNAL. */
describe('databaseUnavailable', () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    [
      'admin shutdown (57P01), wrapped by MikroORM',
      new DriverException(withCode('terminating connection due to administrator command', '57P01')),
    ],
    ['starting up (57P03)', withCode('the database system is starting up', '57P03')],
    ['class 08 connection exception', new ConnectionException(withCode('connection failure', '08006'))],
    ['node-postgres lost its connection', new Error('Connection terminated unexpectedly')],
    ['every address refused', new AggregateError([withCode('refused', 'ECONNREFUSED')], 'connect failed')],
    ['as a cause', new Error('query failed', { cause: withCode('shutting down', '57P01') })],
  ])('%s: 503 SERVICE_UNAVAILABLE with Retry-After 5', (_, error) => {
    const app = databaseUnavailable(error);
    expect(app?.code).toBe('SERVICE_UNAVAILABLE');
    expect(app?.retryAfterSeconds).toBe(5);
    expect(app?.cause).toBe(error);
  });

  it.each([
    ['a constraint violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', withCode('syntax error at or near "SELEC"', '42601')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an Error', 'ECONNREFUSED'],
  ])('%s stays INTERNAL', (_, error) => {
    expect(databaseUnavailable(error)).toBeUndefined();
  });
});
