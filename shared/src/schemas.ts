import { z } from 'zod';
import { ROLES } from './roles';

/**
 * zod schemas of every resource of the notarization spec (`spec/000`, Resources and their fields), shared
 * by the server (response validation, OpenAPI) and the desktop client. Runs in Node and in the browser.
 */

/** Lower-case hex SHA-256, 64 characters. */
export const Sha256Hex = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'must be a hex SHA-256 (64 characters)')
  .transform((s) => s.toLowerCase());

/**
 * Serial number: `<PREFIX>-<CODE>`. PREFIX is 2 to 12 characters A-Z/0-9 naming the tenant; CODE is 10
 * Crockford base32 characters (0-9, A-Z without I, L, O, U), random, unique across all tenants.
 * Lookups accept any case and any prefix; see README (Serial numbers).
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

/** Public projection: exactly these fields, never owner, IP or storage details (spec). */
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
  })
  .meta({ id: 'OnchainInfo' });
export type OnchainInfoDto = z.infer<typeof OnchainInfoSchema>;

export const DocumentListSchema = z.object({ documents: z.array(DocumentSchema) });
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

export const ErrorBodySchema = z.object({ message: z.string(), code: z.string() }).meta({ id: 'Error' });

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

/* Team routes (spec, Team; README, Team): the bodies the spec leaves unshown are defined here. */

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
