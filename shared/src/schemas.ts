import { z } from 'zod';
import { ROLES } from './roles';

/**
 * zod schemas of every resource of the notarization spec (`spec/000`, Resources and their fields), shared
 * by the server (response validation, OpenAPI) and the desktop client. Runs in Node and in the browser.
 */

/** A resource id of the service (documents, policies, batches): an RFC 9562 UUID, hex with dashes. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Input schema of a resource id. The spec answers a missing resource with 404 and has no 400 for a
 * malformed id, so a string that is not a UUID is accepted here and found by nobody (the lookup checks
 * {@link UUID_PATTERN} before any query, so it never reaches PostgreSQL); the bound keeps logs short.
 */
export const ResourceId = z.string().min(1).max(64).meta({ format: 'uuid' });

/** A hex SHA-256 as clients may send it: 64 hex digits, any case. */
export const SHA256_HEX_PATTERN = /^[0-9a-fA-F]{64}$/;

/** Lower-case hex SHA-256, 64 characters. */
export const Sha256Hex = z
  .string()
  .regex(SHA256_HEX_PATTERN, 'must be a hex SHA-256 (64 characters)')
  .transform((s) => s.toLowerCase());

/**
 * Serial number: `<PREFIX>-<CODE>`. PREFIX is 2 to 12 characters A-Z/0-9 naming the tenant; CODE is 10
 * Crockford base32 characters (0-9, A-Z without I, L, O, U), random, unique across all tenants.
 * Lookups accept any case and any prefix; see docs/api.md (Serial numbers).
 */
export const SERIAL_PATTERN = /^[A-Z0-9]{2,12}-[0-9A-HJKMNP-TV-Z]{10}$/;
export const SerialNumber = z
  .string()
  .transform((s) => s.trim().toUpperCase())
  .pipe(z.string().regex(SERIAL_PATTERN, 'must be <PREFIX>-<CODE>, e.g. ACME-7K2M9Q4XTB'));

export const SourceType = z.enum(['upload', 'ipfs', 'fileverse', 'web-capture']);
export const AnchorStatus = z.enum(['pending', 'registered']);
const IsoDate = z.iso.datetime({ offset: true });

export const DocumentSchema = z
  .object({
    id: z.string(),
    serialNumber: z.string(),
    fileName: z.string(),
    fileSize: z.number().int().nonnegative(),
    mimeType: z.string(),
    sha256Hash: z.string().length(64),
    sourceType: SourceType,
    sourceUri: z.string().nullable(),
    screenshot: z.string().nullable(),
    onchainStatus: AnchorStatus,
    onchainTxHash: z.string().nullable(),
    onchainAttestationUid: z.string().nullable(),
    onchainAt: IsoDate.nullable(),
    stacksStatus: AnchorStatus,
    stacksTxId: z.string().nullable(),
    stacksAnchoredAt: IsoDate.nullable(),
    consentGiven: z.boolean(),
    consentTimestamp: IsoDate,
    createdAt: IsoDate,
    published: z.boolean(),
    publishedAt: IsoDate.nullable(),
    acervoTitle: z.string().nullable(),
    acervoAuthor: z.string().nullable(),
    metadata: z.string().nullable(),
  })
  .meta({ id: 'Document' });
export type DocumentDto = z.infer<typeof DocumentSchema>;

/** Public projection: exactly these fields, never owner, IP or storage details (spec, Public document projection). */
export const PublicDocumentSchema = z
  .strictObject({
    serialNumber: z.string(),
    sha256Hash: z.string(),
    onchainStatus: AnchorStatus,
    onchainTxHash: z.string().nullable(),
    onchainAttestationUid: z.string().nullable(),
    stacksStatus: AnchorStatus,
    stacksTxId: z.string().nullable(),
    createdAt: IsoDate,
  })
  .meta({ id: 'PublicDocument' });
export type PublicDocumentDto = z.infer<typeof PublicDocumentSchema>;

export const VerifyByHashSchema = z
  .object({ found: z.boolean(), document: PublicDocumentSchema.optional() })
  .meta({ id: 'VerifyByHash' });
export type VerifyByHashDto = z.infer<typeof VerifyByHashSchema>;

export const HashComparisonSchema = z
  .object({
    documentId: z.string(),
    serialNumber: z.string(),
    hashMatches: z.boolean(),
    storedHash: z.string(),
    providedHash: z.string(),
  })
  .meta({ id: 'HashComparison' });
export type HashComparisonDto = z.infer<typeof HashComparisonSchema>;

export const DownloadSchema = z
  .object({ downloadUrl: z.string(), sha256: z.string(), expiresInSeconds: z.number().int() })
  .meta({ id: 'Download' });
export type DownloadDto = z.infer<typeof DownloadSchema>;

export const ViewSchema = z
  .object({ viewUrl: z.string(), inline: z.boolean(), expiresInSeconds: z.number().int() })
  .meta({ id: 'View' });
export type ViewDto = z.infer<typeof ViewSchema>;

export const HealthSchema = z.object({ status: z.literal('ok'), timestamp: IsoDate }).meta({ id: 'Health' });

export const OnchainInfoSchema = z
  .object({
    network: z.string(),
    chainId: z.number().int(),
    enabled: z.boolean(),
    explorerTxPrefix: z.string(),
    attestationScanPrefix: z.string(),
    stacksNetwork: z.string(),
    stacksEnabled: z.boolean(),
    stacksExplorerTxPrefix: z.string(),
    /**
     * Public endpoints a verifier may ask, to check a receipt without this service: EVM JSON-RPC URLs and Stacks API
     * base URLs, reachable with CORS. The web verify page asks them from the browser;
     * `notary-verify --evm-rpc/--stacks-api` too.
     */
    verification: z.object({ evmRpcUrls: z.array(z.string()), stacksApiUrls: z.array(z.string()) }),
  })
  .meta({ id: 'OnchainInfo' });
export type OnchainInfoDto = z.infer<typeof OnchainInfoSchema>;

/**
 * `GET /api/documents` paging and search (docs/api.md, Documents list). The spec's list has no parameters; the
 * service bounds it to a page of `DOCUMENT_LIST_DEFAULT_LIMIT` and reaches the rest with `nextCursor`, so one
 * call costs the same for ten documents or ten million.
 */
export const DOCUMENT_LIST_MAX_LIMIT = 100;
export const DOCUMENT_LIST_DEFAULT_LIMIT = 100;
/** Shortest search text: a file name part must hold a trigram for its index to serve it (`pg_trgm`). */
export const DOCUMENT_SEARCH_MIN_LENGTH = 3;
/** Shortest hex text searched as a SHA-256 prefix (a 32-bit prefix: few matches in any archive). */
export const DOCUMENT_HASH_PREFIX_MIN_LENGTH = 8;
export const DocumentListQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(DOCUMENT_LIST_MAX_LIMIT)
    .optional()
    .meta({
      description: `Page size, 1 to ${DOCUMENT_LIST_MAX_LIMIT} (default ${DOCUMENT_LIST_DEFAULT_LIMIT})`,
    }),
  cursor: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .meta({ description: 'The `nextCursor` of the previous page (opaque); absent for the first page' }),
  q: z.string().trim().min(DOCUMENT_SEARCH_MIN_LENGTH).max(200).optional().meta({
    description:
      'Search: serial number prefix (any case), SHA-256 prefix (8 to 64 hex characters), IPFS CID prefix, or a part of the file name (any case)',
  }),
});
export type DocumentListQuery = z.input<typeof DocumentListQuerySchema>;
export const DocumentListSchema = z.object({
  documents: z.array(DocumentSchema),
  nextCursor: z.string().nullable().meta({ description: 'Cursor of the next page; null on the last page' }),
});
export type DocumentListDto = z.infer<typeof DocumentListSchema>;
export const DocumentEnvelopeSchema = z.object({ document: DocumentSchema });

/** Identity of the caller as the service sees it (tRPC `session.me`). */
export const MeSchema = z.object({
  userId: z.string(),
  email: z.string().nullable(),
  tenantId: z.string(),
  tenantKind: z.enum(['personal', 'organization']),
  orgId: z.string().nullable(),
  role: z.enum(ROLES),
});
export type MeDto = z.infer<typeof MeSchema>;

/**
 * Every REST error body (spec, Errors): `{message, code}`, plus `fields` (the request fields at fault) when the
 * error is about named fields of the input.
 */
export const ErrorBodySchema = z
  .object({
    message: z.string(),
    code: z.string(),
    fields: z.array(z.string()).optional().meta({ description: 'The request fields at fault' }),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "The refusal's facts as data, e.g. a retention hold's rule and legal basis" }),
  })
  .meta({ id: 'Error' });

export const TeamMemberSchema = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  imageUrl: z.string(),
  role: z.enum(ROLES),
  isOwner: z.boolean(),
});
export const InvitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  createdAt: IsoDate,
});

/* Team routes (spec, Team: see also docs/team.md, Team): the bodies the spec leaves unshown are defined here. */

/** Roles that can be given through the team routes (invite, change role); `owner` is never assignable there. */
export const ASSIGNABLE_ROLES = ['admin', 'editor', 'reader'] as const;
export const AssignableRoleSchema = z.enum(ASSIGNABLE_ROLES);
export type AssignableRole = z.infer<typeof AssignableRoleSchema>;

/** An EVM wallet address: `0x` plus 40 hex digits, any case (spec, Team: invite by wallet). */
export const WALLET_ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

/** Languages of the service's mail templates: Portuguese (default) and English. */
export const MAIL_LANGUAGES = ['pt', 'en'] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];

export type TeamMemberDto = z.infer<typeof TeamMemberSchema>;
export type InvitationDto = z.infer<typeof InvitationSchema>;

/** `GET /api/team/members`: members with the service's roles, and the caller's own role. */
export const TeamMemberListSchema = z
  .object({ members: z.array(TeamMemberSchema), myRole: z.enum(ROLES) })
  .meta({ id: 'TeamMembers' });
export type TeamMemberListDto = z.infer<typeof TeamMemberListSchema>;

/** `GET /api/team/invitations`: pending, unexpired invitations. */
export const InvitationListSchema = z
  .object({ invitations: z.array(InvitationSchema) })
  .meta({ id: 'TeamInvitations' });
export type InvitationListDto = z.infer<typeof InvitationListSchema>;

/**
 * `POST /api/team/invitations` body: `role` and exactly one of `email` or `wallet`; `lang` picks the mail's
 * language (else the request's `Accept-Language`, else Portuguese).
 */
export const TeamInviteInputSchema = z.object({
  role: AssignableRoleSchema,
  email: z.email().max(254).optional(),
  wallet: z.string().regex(WALLET_ADDRESS_PATTERN, 'must be 0x plus 40 hex digits').optional(),
  lang: z.enum(MAIL_LANGUAGES).optional(),
});
export type TeamInviteInput = z.infer<typeof TeamInviteInputSchema>;

/** `POST /api/team/invitations` answer: `{ok:true}` by e-mail, `{ok:true, joined:true}` by wallet. */
export const TeamInviteResultSchema = z
  .object({ ok: z.literal(true), joined: z.literal(true).optional() })
  .meta({ id: 'TeamInviteResult' });
export type TeamInviteResultDto = z.infer<typeof TeamInviteResultSchema>;

/** `POST /api/team/invitations/:invitationId/accept` answer: the organization joined and the role there. */
export const InvitationAcceptedSchema = z
  .object({ ok: z.literal(true), organizationId: z.string(), role: z.enum(ROLES) })
  .meta({ id: 'InvitationAccepted' });
export type InvitationAcceptedDto = z.infer<typeof InvitationAcceptedSchema>;

/** `PATCH /api/team/members/:userId` answer. */
export const MemberRoleChangedSchema = z
  .object({ ok: z.literal(true), role: z.enum(ROLES) })
  .meta({ id: 'MemberRoleChanged' });
export type MemberRoleChangedDto = z.infer<typeof MemberRoleChangedSchema>;

/** `DELETE /api/team/members/:userId` and `DELETE /api/team/invitations/:invitationId` answer. */
export const TeamOkSchema = z.object({ ok: z.literal(true) }).meta({ id: 'TeamOk' });
export type TeamOkDto = z.infer<typeof TeamOkSchema>;

/* Sharing, access log, acervo and LGPD deletion (spec, Public, no credentials: share and access routes;
   Acervo feed, Access log,
   Documents publish; see also docs/sharing.md). The bodies the spec leaves unshown are here. */

/** What a share access grants: a download URL (1 hour) or a view URL (15 minutes). */
export const SharePermissionSchema = z.enum(['download', 'view']);
export type SharePermission = z.infer<typeof SharePermissionSchema>;

/** Kinds of access policy (spec, Access policy). */
export const ACCESS_POLICY_KINDS = ['link', 'public', 'wallet', 'email'] as const;
export const AccessPolicyKindSchema = z.enum(ACCESS_POLICY_KINDS);
export type AccessPolicyKind = z.infer<typeof AccessPolicyKindSchema>;

/** Longest lifetime of an access policy: 366 days. */
export const MAX_POLICY_SECONDS = 366 * 86400;
/** Most addresses one wallet or e-mail policy authorizes. */
export const MAX_POLICY_ADDRESSES = 100;

const WalletAddress = z.string().regex(WALLET_ADDRESS_PATTERN, 'must be 0x plus 40 hex digits');
const EmailAddress = z.email().max(254);

/**
 * `POST /api/documents/:id/access-policies` body. `kind`: `link` (an opaque token, returned once), `public`
 * (one per document: a new one replaces the previous), `wallet` (`addresses`: 0x wallets) or `email`
 * (`addresses`: e-mail addresses); `addresses` is required for wallet and email, refused for link and public.
 * `permission` defaults to `download`; `expiresInSeconds` absent: never expires; `maxAccesses` absent:
 * unlimited.
 */
export const CreateAccessPolicyInputSchema = z
  .object({
    kind: AccessPolicyKindSchema,
    permission: SharePermissionSchema.optional(),
    expiresInSeconds: z.number().int().min(1).max(MAX_POLICY_SECONDS).optional(),
    maxAccesses: z.number().int().min(1).max(1_000_000).optional(),
    addresses: z.array(z.string().max(254)).min(1).max(MAX_POLICY_ADDRESSES).optional(),
  })
  .superRefine((value, ctx) => {
    if (value.kind === 'link' || value.kind === 'public') {
      if (value.addresses !== undefined)
        ctx.addIssue({ code: 'custom', path: ['addresses'], message: `not allowed for kind ${value.kind}` });
      return;
    }
    if (value.addresses === undefined) {
      ctx.addIssue({ code: 'custom', path: ['addresses'], message: `required for kind ${value.kind}` });
      return;
    }
    const check = value.kind === 'wallet' ? WalletAddress : EmailAddress;
    value.addresses.forEach((address, i) => {
      const result = check.safeParse(address);
      if (!result.success) {
        ctx.addIssue({
          code: 'custom',
          path: ['addresses', i],
          message: value.kind === 'wallet' ? 'must be 0x plus 40 hex digits' : 'must be an e-mail address',
        });
      }
    });
  });
export type CreateAccessPolicyInput = z.infer<typeof CreateAccessPolicyInputSchema>;

/**
 * An access policy as its manager sees it. `status` is derived: `revoked` (by a manager or an LGPD deletion),
 * `expired`, `exhausted` (`accessCount` reached `maxAccesses`), else `active`. `addresses` (lower case) are
 * the authorized wallets or e-mails (empty for link and public). The link token itself is never shown again.
 */
export const AccessPolicySchema = z
  .object({
    id: z.string(),
    documentId: z.string(),
    kind: AccessPolicyKindSchema,
    permission: SharePermissionSchema,
    status: z.enum(['active', 'revoked', 'expired', 'exhausted']),
    expiresAt: IsoDate.nullable(),
    maxAccesses: z.number().int().nullable(),
    accessCount: z.number().int(),
    addresses: z.array(z.string()),
    createdBy: z.string(),
    createdAt: IsoDate,
    revokedAt: IsoDate.nullable(),
  })
  .meta({ id: 'AccessPolicy' });
export type AccessPolicyDto = z.infer<typeof AccessPolicySchema>;

/** Answer of policy creation: the policy, and for a link its token and URL (shown this once). */
export const CreatedAccessPolicySchema = z
  .object({
    policy: AccessPolicySchema,
    token: z.string().optional(),
    shareUrl: z.string().optional(),
  })
  .meta({ id: 'CreatedAccessPolicy' });
export type CreatedAccessPolicyDto = z.infer<typeof CreatedAccessPolicySchema>;

export const AccessPolicyListSchema = z
  .object({ policies: z.array(AccessPolicySchema) })
  .meta({ id: 'AccessPolicies' });
export type AccessPolicyListDto = z.infer<typeof AccessPolicyListSchema>;

/** Spec, Share access response. */
export const ShareAccessSchema = z
  .object({
    documentId: z.string(),
    fileName: z.string(),
    serialNumber: z.string(),
    accessUrl: z.string(),
    permission: SharePermissionSchema,
    expiresInSeconds: z.number().int(),
  })
  .meta({ id: 'ShareAccess' });
export type ShareAccessDto = z.infer<typeof ShareAccessSchema>;

/** `POST /access/wallet/:documentId` body (spec, Public, no credentials): the message must contain the documentId. */
export const WalletAccessInputSchema = z.object({
  address: z.string().max(100),
  signature: z.string().max(1000),
  message: z.string().min(1).max(4000),
});
export type WalletAccessInput = z.infer<typeof WalletAccessInputSchema>;

/** `POST /access/email/:documentId/request` body. */
export const EmailAccessRequestInputSchema = z.object({ email: z.email().max(254) });

/** Same `message` whether or not the address is authorized; `token` only in development. */
export const EmailAccessRequestSchema = z
  .object({ message: z.string(), token: z.string().optional() })
  .meta({ id: 'EmailAccessRequest' });
export type EmailAccessRequestDto = z.infer<typeof EmailAccessRequestSchema>;

/** Spec, Access log entry. */
export const AccessLogEntrySchema = z
  .object({
    id: z.string(),
    accessorType: z.enum(['anonymous', 'wallet', 'email']),
    accessorIdentifier: z.string(),
    permission: SharePermissionSchema,
    ip: z.string(),
    createdAt: IsoDate,
  })
  .meta({ id: 'AccessLogEntry' });
export type AccessLogEntryDto = z.infer<typeof AccessLogEntrySchema>;

export const AccessLogSchema = z.object({ log: z.array(AccessLogEntrySchema) }).meta({ id: 'AccessLog' });
export type AccessLogDto = z.infer<typeof AccessLogSchema>;

/** Longest curator title and author of the acervo (characters). */
export const ACERVO_TEXT_MAX = 500;
/** Longest curator metadata string (characters). */
export const ACERVO_METADATA_MAX = 10_000;

/**
 * `PATCH /api/documents/:id/publish` body (spec, Documents: rule 2): only the fields sent are rewritten;
 * `null` or an empty string clears a curator field (the feed's title then falls back to the file name).
 */
export const PublishInputSchema = z.object({
  published: z.boolean(),
  title: z.string().trim().max(ACERVO_TEXT_MAX).nullable().optional(),
  author: z.string().trim().max(ACERVO_TEXT_MAX).nullable().optional(),
  metadata: z.string().max(ACERVO_METADATA_MAX).nullable().optional(),
});
export type PublishInput = z.infer<typeof PublishInputSchema>;

/** Longest URL a web capture accepts (characters). */
export const CAPTURE_URL_MAX = 8192;

/**
 * `POST /api/documents/capture` body: the page to capture (http or https), consent to the processing (LGPD Art. 7 I:
 * must be `true`), and the archive's file name (default `<host>-<time>.wacz`).
 */
export const WebCaptureInputSchema = z.object({
  url: z.string().trim().min(1).max(CAPTURE_URL_MAX),
  consent: z.boolean(),
  fileName: z.string().trim().min(1).max(255).optional(),
});
export type WebCaptureInput = z.infer<typeof WebCaptureInputSchema>;

/** Spec, Acervo feed item. `author` and `metadata` are empty strings when the curator left them unset. */
export const AcervoFeedItemSchema = z
  .object({
    serialNumber: z.string(),
    title: z.string(),
    author: z.string(),
    metadata: z.string(),
    publishedAt: IsoDate,
  })
  .meta({ id: 'AcervoFeedItem' });
export type AcervoFeedItemDto = z.infer<typeof AcervoFeedItemSchema>;

export const AcervoFeedSchema = z
  .object({ documents: z.array(AcervoFeedItemSchema), total: z.number().int() })
  .meta({ id: 'AcervoFeed' });
export type AcervoFeedDto = z.infer<typeof AcervoFeedSchema>;

/** Acervo page size (spec, Limits): `limit` 1 to 60 (default 60), `offset` from 0 (default 0). */
export const ACERVO_MAX_LIMIT = 60;
export const AcervoFeedQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(ACERVO_MAX_LIMIT).default(ACERVO_MAX_LIMIT),
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
});

/** `POST /api/settings/acervo-token`: the new token, shown this once (only its hash is stored). */
export const AcervoTokenCreatedSchema = z
  .object({ token: z.string(), createdAt: IsoDate })
  .meta({ id: 'AcervoTokenCreated' });
export type AcervoTokenCreatedDto = z.infer<typeof AcervoTokenCreatedSchema>;

/** `GET /api/settings/acervo-token`: whether the tenant has a token, never the token. */
export const AcervoTokenStatusSchema = z
  .object({ enabled: z.boolean(), createdAt: IsoDate.nullable() })
  .meta({ id: 'AcervoTokenStatus' });
export type AcervoTokenStatusDto = z.infer<typeof AcervoTokenStatusSchema>;

/** `{ok:true}` answers of the sharing and settings routes. */
export const OkSchema = z.object({ ok: z.literal(true) }).meta({ id: 'Ok' });

/** `DELETE /api/documents/:id` (LGPD deletion) answer: what stays on record. */
export const LgpdDeletionSchema = z
  .object({
    ok: z.literal(true),
    documentId: z.string(),
    serialNumber: z.string(),
    sha256Hash: z.string(),
    deletedAt: IsoDate,
    /** What the deletion could not reach, when something: an IPFS import's bytes stay on IPFS. */
    note: z.string().optional(),
  })
  .meta({ id: 'LgpdDeletion' });
export type LgpdDeletionDto = z.infer<typeof LgpdDeletionSchema>;
