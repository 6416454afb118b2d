import { finished } from 'node:stream/promises';
import { AppError, DocumentSchema, RATE_LIMITS } from '@notary/shared';
import { z } from 'zod';
import { type IntakeSource, notarize } from '../../../domain/documents/notarize';
import { toDocumentDto } from '../../../domain/documents/projection';
import type { IpfsGateways } from '../../../ports/ipfs';
import { authedProcedure } from '../../trpc';

/** `POST /api/documents/import/ipfs` body (spec, Documents). */
const ImportIpfsInput = z.object({
  cid: z
    .string()
    .max(200)
    .meta({ description: 'A bare CID: CIDv0 (`Qm…`, base58btc) or CIDv1 in base32 (`b…`), of a file' }),
  fileName: z.string().max(1024).optional().meta({ description: 'Defaults to the CID' }),
  consent: z.boolean().meta({ description: 'Must be true (LGPD Art. 7 I)' }),
});

/**
 * `POST /api/documents/import/ipfs` (spec, Documents; issue 14) `{cid, fileName?, consent}`: notarizes the file
 * a CID names without storing it. The bytes come from the configured trustless gateways, verified block by
 * block against the CID, and are hashed as they stream (`notarize`, reference intake: the same role, consent
 * and anchoring as an upload; no storage, no quota). 201 Document with `sourceType: "ipfs"`,
 * `sourceUri: "ipfs://<cid>"`. 400 a CID not accepted, a directory, no consent, a DAG past the import's
 * budgets (blocks or bytes fetched for the size its root declares, links to empty parts); 403 below editor in
 * an organization; 413 over 250 MB (as soon as the UnixFS root says so); 429 over 10 a minute (`ipfsImport`)
 * or as many imports running as `IPFS_IMPORT_CONCURRENCY` allows; 502 gateway unreachable, timed out,
 * failing, or sending bytes that are not the CID's; 504 not done within `IPFS_IMPORT_TIMEOUT_MS` (nothing is
 * recorded on any failure). A client that hangs up (either face) stops the fetching: `signal`.
 */
export const importIpfs = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'A CID other than a bare CIDv0 or base32 CIDv1 of a file (a directory, a path, another base), a DAG past the import budgets (blocks linked over and over, empty parts), or consent not true',
        401: 'Missing or invalid session token',
        403: 'Below editor in the organization',
        413: 'The file exceeds 250 MB',
        429: `Over ${RATE_LIMITS.ipfsImport} imports a minute, or as many imports running as the service allows (IPFS_IMPORT_CONCURRENCY)`,
        502: 'IPFS gateway unreachable, timed out or failing, or a block that does not verify against its CID',
        504: 'The import did not finish within IPFS_IMPORT_TIMEOUT_MS',
      },
      method: 'POST',
      path: '/api/documents/import/ipfs',
      tags: ['documents'],
      protect: true,
      summary: 'Notarize a file on IPFS by its CID (reference-only record)',
      successDescription: 'The Document, `sourceType: "ipfs"`, `sourceUri: "ipfs://<cid>"`',
    },
    rest: { status: 201 },
    rateLimit: 'ipfsImport',
  })
  .input(ImportIpfsInput)
  .output(DocumentSchema)
  .mutation(async ({ ctx, input, signal }) => {
    const cid = input.cid.trim();
    const doc = await notarize(ctx.em(), ctx.deps, ctx.actor, {
      kind: 'reference',
      sourceType: 'ipfs',
      sourceUri: `ipfs://${cid}`,
      source: ipfsSource(ctx.deps.ipfs, { ...input, cid }, signal ?? new AbortController().signal),
    });
    return toDocumentDto(doc);
  });

/**
 * The import as an intake: `announce` checks the CID and consent before anything is fetched; `read` fetches
 * the file (root block first: its size, or that it is a directory) and resolves once the verified stream has
 * ended, so a gateway failure mid-file rejects it and nothing is recorded.
 */
function ipfsSource(
  ipfs: IpfsGateways,
  input: { cid: string; fileName?: string | undefined; consent: boolean },
  signal: AbortSignal,
): IntakeSource {
  let consentAt: Date | undefined;
  let cid = '';
  return {
    announce: () => {
      cid = ipfs.parseCid(input.cid);
      if (input.consent !== true) {
        throw new AppError('BAD_REQUEST', 'Consent is required (LGPD Art. 7 I): send `consent: true`', {
          fields: ['consent'],
        });
      }
      consentAt = new Date();
      return undefined;
    },
    read: async (onFile) => {
      const file = await ipfs.fetchFile(cid, { signal });
      onFile({
        stream: file.stream,
        fileName: input.fileName?.trim() || cid,
        declaredType: undefined,
        size: file.size,
      });
      await finished(file.stream);
      return { consentAt };
    },
  };
}
