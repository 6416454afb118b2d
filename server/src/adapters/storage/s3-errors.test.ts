import { S3ServiceException } from '@aws-sdk/client-s3';
import { AppError } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { storageError } from './s3-versions';

/** The object store away is worth a retry (503 + Retry-After); a refusal that waiting does not fix is 502. */
describe('storageError', () => {
  const answered = (status: number, name: string) =>
    new S3ServiceException({
      name,
      $fault: status >= 500 ? 'server' : 'client',
      $metadata: { httpStatusCode: status },
    });

  it.each([
    [
      'connection refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7480'), { code: 'ECONNREFUSED' }),
    ],
    ['503 SlowDown', answered(503, 'SlowDown')],
    ['500 InternalError', answered(500, 'InternalError')],
  ])('%s: SERVICE_UNAVAILABLE with Retry-After 10', (_, e) => {
    const app = storageError(e, 'upload failed');
    expect({ code: app.code, retryAfterSeconds: app.retryAfterSeconds }).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      retryAfterSeconds: 10,
    });
    expect(app.message).toMatch(/^Object storage is unavailable: upload failed/);
  });

  it.each([
    ['403 AccessDenied', answered(403, 'AccessDenied')],
    ['400 InvalidRequest', answered(400, 'InvalidRequest')],
  ])('%s: BAD_GATEWAY, no Retry-After', (_, e) => {
    const app = storageError(e, 'upload failed');
    expect({ code: app.code, retryAfterSeconds: app.retryAfterSeconds }).toEqual({
      code: 'BAD_GATEWAY',
      retryAfterSeconds: undefined,
    });
  });

  it('an AppError passes as it is', () => {
    const e = new AppError('PAYLOAD_TOO_LARGE', 'too large');
    expect(storageError(e, 'upload failed')).toBe(e);
  });
});
