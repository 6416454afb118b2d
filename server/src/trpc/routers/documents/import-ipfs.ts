import { DocumentSchema, RATE_LIMITS } from '@notary/shared';
import { z } from 'zod';
import { importIpfsDocument } from '../../../domain/documents/import-ipfs';
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
 * `POST /api/documents/import/ipfs` `{cid, fileName?, consent}` (spec, Documents): notarizes the file a CID
 * names without storing it (`importIpfsDocument`); 201 Document with `sourceType: "ipfs"`. 10 a minute
 * (`ipfsImport`). A client that hangs up (either face) stops the fetching: `signal`.
 */
export const importIpfs = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'A CID other than a bare CIDv0 or base32 CIDv1 of a file (a directory, a path, another base), a DAG past the import budgets (blocks linked over and over, empty parts), or consent not true',
        401: 'Missing or invalid session token',
        403: 'Below editor in the organization',
        413: 'The file exceeds 250 MB',
        429: `Over ${RATE_LIMITS.ipfsImport} imports a minute, or every import place taken (IPFS_IMPORT_CONCURRENCY running, as many waiting) or the workspace's share of them held`,
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
  .mutation(({ ctx, input, signal }) =>
    importIpfsDocument(
      ctx.em(),
      { ...ctx.deps, log: ctx.log },
      ctx.actor,
      input,
      signal ?? new AbortController().signal,
    ),
  );
