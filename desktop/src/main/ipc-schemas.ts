import path from 'node:path';
import { ATA_REQUESTER_LIMITS } from '@notary/shared/cpf';
import { z } from 'zod';
import { isCaptureUrl, MAX_CAPTURE_URL_LENGTH } from '../common/capture-url';
import { endpointProblem, MAX_ANCHOR_FILES, MAX_ENDPOINTS } from '../common/certificate-check';
import { isBareCid, MAX_CID_LENGTH } from '../common/cid';
import type { Channel, IpcContract } from '../common/ipc';

/**
 * zod schema of every IPC payload main accepts (`common/ipc.ts`). Objects are strict (an unknown key, such
 * as `__proto__` or `constructor` smuggled in through a payload, is an error), strings are bounded, ids and
 * hashes have their exact shapes, paths must be absolute and already normalized (no `..`, no NUL).
 */

/** Ids handed out by this app (files, jobs): UUIDs. */
const LocalId = z.uuid();
/** Ids of the service (documents are UUIDs; organizations and invitations are better-auth's strings). */
const ServerId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be an identifier');
const Email = z.email().max(254);
const Sha256 = z
  .string()
  .length(64)
  .regex(/^[0-9a-fA-F]{64}$/, 'must be a hex SHA-256');
const Serial = z
  .string()
  .max(40)
  .regex(/^\s*[A-Za-z0-9]{2,12}-[0-9A-Za-z]{10}\s*$/, 'must be <PREFIX>-<CODE>');
const Language = z.enum(['pt', 'en']);
/** A bare CID the service accepts (`common/cid.ts`): v0 `Qm…` or v1 base32 `b…`, nothing around it. */
const Cid = z
  .string()
  .max(MAX_CID_LENGTH)
  .refine(isBareCid, 'must be a bare CID: v0 (Qm…) or v1 in base32 (b…)');
/** A document name typed by the user: the server keeps its last segment, at most 255 characters. */
const DocumentName = z
  .string()
  .min(1)
  .max(1024)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters');
/** A page to capture (`common/capture-url.ts`): http(s), a host, no credentials, trimmed. */
const CaptureUrl = z
  .string()
  .max(MAX_CAPTURE_URL_LENGTH)
  .refine(isCaptureUrl, 'must be an http(s) URL with a host and without credentials');
const HttpUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without credentials');
/** A chain endpoint the user may enter (`common/certificate-check.ts`): https, or http on loopback. */
const ChainEndpoint = z
  .string()
  .max(2048)
  .refine((s) => endpointProblem(s) === null, 'must be an https URL (http only on loopback), no credentials');
/** Trust anchors of the certificate check (`TrustChoice`): none, the shipped ICP-Brasil roots, or picked files. */
const TrustChoice = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('none') }),
  z.strictObject({ kind: z.literal('icp-brasil') }),
  z.strictObject({ kind: z.literal('files'), fileIds: z.array(LocalId).min(1).max(MAX_ANCHOR_FILES) }),
]);
/** The time certificates are judged at: a UTC date-time as `Date.toISOString()` writes it. */
const JudgeAt = z.iso.datetime({ precision: 3 }).nullable();
/** A path from `webUtils.getPathForFile`: absolute, normalized, bounded. */
export const LocalPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'must not contain NUL')
  .refine((p) => path.isAbsolute(p), 'must be absolute')
  .refine((p) => path.normalize(p) === p && !p.split(/[\\/]/).includes('..'), 'must be normalized');

/** A PKCS#11 slot handle or CKA_ID as `token-signing.ts` writes them: lower-case hex, bounded. */
const TokenHandle = z
  .string()
  .max(128)
  .regex(/^(?:[0-9a-f]{2})*$/, 'must be lower-case hex');
/**
 * The token's PIN as UTF-8 bytes (a typed array, so both sides can zero their copy); PKCS#11 tokens take 4 to
 * 64 characters. The refusal never echoes the bytes.
 */
const Pin = z
  .instanceof(Uint8Array, { message: 'must be bytes' })
  .refine((b) => b.length >= 4 && b.length <= 64, 'must be 4 to 64 bytes');

/** `undefined`: the channel takes no payload. */
export const IPC_SCHEMAS = {
  'settings:get': z.undefined(),
  'settings:set-server-url': z.strictObject({ url: HttpUrl }),
  'settings:set-language': z.strictObject({ language: Language }),
  'server:check': z.undefined(),
  'auth:request-code': z.strictObject({ email: Email }),
  'auth:sign-in': z.strictObject({ email: Email, code: z.string().regex(/^\d{6}$/, 'must be 6 digits') }),
  'auth:session': z.undefined(),
  'auth:set-tenant': z.strictObject({ orgId: ServerId.nullable() }),
  'auth:sign-out': z.undefined(),
  'files:pick': z.undefined(),
  'files:dropped': z.strictObject({ paths: z.array(LocalPath).min(1).max(100) }),
  'files:hash': z.strictObject({ fileId: LocalId, jobId: LocalId }),
  'files:upload': z.strictObject({ fileId: LocalId, jobId: LocalId, consent: z.literal(true) }),
  'jobs:cancel': z.strictObject({ jobId: LocalId }),
  'public:verify': z.strictObject({ hash: Sha256 }),
  'public:check-certificate': z.strictObject({
    fileId: LocalId,
    certificateId: LocalId,
    endpoints: z.strictObject({
      evmRpcUrls: z.array(ChainEndpoint).max(MAX_ENDPOINTS),
      stacksApiUrls: z.array(ChainEndpoint).max(MAX_ENDPOINTS),
    }),
    trust: TrustChoice,
    at: JudgeAt,
  }),
  'public:check-chain': z.strictObject({ fileId: LocalId }),
  'public:document': z.strictObject({ serial: Serial }),
  'public:onchain-info': z.undefined(),
  'documents:list': z
    .strictObject({
      limit: z.number().int().min(1).max(100).optional(),
      cursor: z.string().min(1).max(128).optional(),
      q: z.string().max(200).optional(),
    })
    .optional(),
  'documents:get': z.strictObject({ id: ServerId }),
  'documents:compare': z.strictObject({ id: ServerId, hash: Sha256 }),
  'documents:import-ipfs': z.strictObject({
    cid: Cid,
    fileName: DocumentName.optional(),
    consent: z.literal(true),
  }),
  'documents:gateway-link': z.strictObject({ id: ServerId }),
  'documents:capture-web': z.strictObject({
    url: CaptureUrl,
    fileName: DocumentName.optional(),
    consent: z.literal(true),
  }),
  'team:accept-invitation': z.strictObject({ invitationId: ServerId }),
  'certificate:save': z.strictObject({ id: ServerId, language: Language }),
  'certificate:open': z.strictObject({ id: ServerId, language: Language }),
  'timestamp:save': z.strictObject({ id: ServerId }),
  'ata:save': z.strictObject({
    id: ServerId,
    requester: z
      .strictObject({
        name: z.string().max(ATA_REQUESTER_LIMITS.name),
        cpf: z.string().max(20),
        qualification: z.string().max(ATA_REQUESTER_LIMITS.qualification).optional(),
        email: z.string().max(ATA_REQUESTER_LIMITS.email).optional(),
      })
      .optional(),
  }),
  'monitors:list': z.undefined(),
  'monitors:get': z.strictObject({ id: ServerId }),
  'monitors:create': z.strictObject({
    url: CaptureUrl,
    interval: z.string().max(32),
    period: z.string().max(32),
  }),
  'monitors:cancel': z.strictObject({ id: ServerId }),
  'certidao:save': z.strictObject({ id: ServerId }),
  'shell:open-external': z.strictObject({ url: HttpUrl }),
  'settings:set-token-module': z.strictObject({ path: LocalPath.nullable() }),
  'token:certificates': z.strictObject({ language: Language }),
  'token:sign': z.strictObject({
    documentId: ServerId,
    slot: TokenHandle.min(2),
    id: TokenHandle,
    policy: z.enum(['icp-brasil-ad-rb', 'icp-brasil-ad-rt']),
    pin: Pin,
    language: Language,
  }),
} as const satisfies { [C in Channel]: z.ZodType<IpcContract[C]['input']> };
