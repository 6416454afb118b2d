import { z } from 'zod';

/**
 * The ICP-Brasil signature policies a tabelião may sign a certificate under (DOC-ICP-15.03): AD-RB (basic
 * reference), or AD-RT (with a signature timestamp the service adds).
 */
export const NotaryPolicySchema = z.enum(['icp-brasil-ad-rb', 'icp-brasil-ad-rt']);
export type NotaryPolicyName = z.infer<typeof NotaryPolicySchema>;

/**
 * What completing the tabelião's deferred signature answers (`PUT /api/documents/{id}/notary-signature/
 * {sessionId}`, tRPC `documents.notarySignatureComplete`): the record of the signed certificate. `level` is the
 * PAdES level the file reached (`B-B` to `B-LTA`), `sha256` the hex SHA-256 of the signed file and `size` its
 * length in bytes; `signers` are the service's signature (when the service signs) and the tabelião's, in the
 * order they signed. The file itself: `GET /api/documents/{id}/certificate?signed=1`.
 */
export const NotarySignedCertificateSchema = z.object({
  sessionId: z.uuid(),
  documentId: z.uuid(),
  /** ISO 8601. */
  completedAt: z.string(),
  level: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  signers: z.array(
    z.object({
      role: z.enum(['service', 'notary']),
      name: z.string(),
      policy: NotaryPolicySchema.optional(),
    }),
  ),
});
export type NotarySignedCertificate = z.infer<typeof NotarySignedCertificateSchema>;
