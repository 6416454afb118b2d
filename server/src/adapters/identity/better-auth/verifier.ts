/**
 * Verification of session JWTs (`Authorization: Bearer <JWT>` on every route but `/api/auth/*`) against the
 * provider's JWK Set: the service's `TokenVerifier` for the in-process provider.
 */
import { AppError, isRole } from '@notary/shared';
import {
  createLocalJWKSet,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type { SessionClaims, TokenVerifier } from '../../../ports/identity';

/** Tolerated clock skew when verifying `exp`/`iat`, seconds. */
const CLOCK_TOLERANCE_SECONDS = 5;
/** The JWKS is reloaded at least this often, so removed keys stop verifying. */
const JWKS_MAX_AGE_MS = 5 * 60_000;
/** An unknown `kid` (a key created since the last load) triggers a reload at most this often. */
const JWKS_RELOAD_COOLDOWN_MS = 1_000;

/**
 * Verifier of session JWTs against an in-process JWK Set (RFC 7517) loaded through `loadJwks`.
 * The set is cached, reloaded every 5 minutes, and reloaded early (at most once a second) when a token names an
 * unknown `kid`, so keys rotated by another instance are picked up. Only ES256 (RFC 7518 3.4) is accepted;
 * `iss` and `aud` must match, `exp` must be in the future, `iat` at most `maxTokenAgeSeconds` old and
 * `exp - iat` at most `maxTokenAgeSeconds` (5 s clock tolerance).
 */
export function createVerifier(input: {
  loadJwks: () => Promise<JSONWebKeySet>;
  issuer: string;
  audience: string;
  maxTokenAgeSeconds: number;
}): TokenVerifier {
  let keySet: ReturnType<typeof createLocalJWKSet> | undefined;
  let loadedAt = 0;
  let loading: Promise<void> | undefined;

  const reload = (): Promise<void> => {
    loading ??= input
      .loadJwks()
      .then((jwks) => {
        keySet = createLocalJWKSet(jwks);
        loadedAt = Date.now();
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };

  const getKey = async (
    header: JWSHeaderParameters,
    token: Parameters<ReturnType<typeof createLocalJWKSet>>[1],
  ) => {
    if (!keySet || Date.now() - loadedAt > JWKS_MAX_AGE_MS) await reload();
    try {
      // biome-ignore lint/style/noNonNullAssertion: reload() either set keySet or threw.
      return await keySet!(header, token);
    } catch (e) {
      if (!(e instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - loadedAt < JWKS_RELOAD_COOLDOWN_MS)
        throw e;
      await reload();
      // biome-ignore lint/style/noNonNullAssertion: as above.
      return await keySet!(header, token);
    }
  };

  return {
    async verify(token: string): Promise<SessionClaims> {
      if (typeof token !== 'string' || token.split('.').length !== 3) {
        throw new AppError('UNAUTHENTICATED', 'Invalid session token: not a JWT');
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          algorithms: ['ES256'],
          issuer: input.issuer,
          audience: input.audience,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          maxTokenAge: input.maxTokenAgeSeconds,
          requiredClaims: ['sub', 'iat', 'exp'],
        }));
      } catch (e) {
        throw toAuthError(e);
      }
      if (typeof payload.sub !== 'string' || payload.sub === '') {
        throw new AppError('UNAUTHENTICATED', 'Invalid session token: no subject');
      }
      // `maxTokenAge` bounds the age, this bounds the lifetime: a longer-lived token was not minted for us.
      if ((payload.exp ?? 0) - (payload.iat ?? 0) > input.maxTokenAgeSeconds + CLOCK_TOLERANCE_SECONDS) {
        throw new AppError('UNAUTHENTICATED', 'Invalid session token: lifetime exceeds the session TTL');
      }
      const orgId = typeof payload.orgId === 'string' && payload.orgId !== '' ? payload.orgId : null;
      return {
        userId: payload.sub,
        email: typeof payload.email === 'string' && payload.email !== '' ? payload.email : null,
        orgId,
        orgRole: orgId !== null && isRole(payload.role) ? payload.role : null,
      };
    },
  };
}

function toAuthError(e: unknown): AppError {
  if (e instanceof AppError) return e;
  if (e instanceof joseErrors.JWTExpired) {
    return new AppError('UNAUTHENTICATED', 'Session token expired', { cause: e });
  }
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    return new AppError('UNAUTHENTICATED', `Invalid session token: ${e.message}`, { cause: e });
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed || e instanceof joseErrors.JOSENotSupported) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: algorithm not accepted', { cause: e });
  }
  if (e instanceof joseErrors.JWKSNoMatchingKey) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: unknown signing key', { cause: e });
  }
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: bad signature', { cause: e });
  }
  if (e instanceof joseErrors.JOSEError) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: malformed', { cause: e });
  }
  // Not the token's fault (the key table could not be read).
  return new AppError('BAD_GATEWAY', 'Identity provider unavailable', { cause: e });
}
