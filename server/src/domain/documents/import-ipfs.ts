import { finished } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/core';
import { AppError, type DocumentDto } from '@notary/shared';
import type { IpfsGateways } from '../../ports/ipfs';
import type { Actor } from '../tenancy/actor';
import { type IntakeSource, type NotarizeDeps, notarize } from './notarize';
import { toDocumentDto } from './projection';

/** What an IPFS import uses of the service (a subset of `AppDeps`). */
export interface ImportIpfsDeps extends NotarizeDeps {
  ipfs: IpfsGateways;
}

/** `POST /api/documents/import/ipfs` body (spec, Documents): the CID, an optional file name, consent. */
export interface ImportIpfsInput {
  cid: string;
  /** Defaults to the CID. */
  fileName?: string | undefined;
  consent: boolean;
}

/**
 * `POST /api/documents/import/ipfs` (spec, Documents: rule 1): notarizes the file a CID names without storing
 * it. The bytes come from the configured trustless gateways, verified block by block against the CID, and are
 * hashed as they stream through the one notarization path (`notarize`, reference intake: the same role,
 * consent and anchoring as an upload; no storage, no quota). The record is `sourceType: "ipfs"`,
 * `sourceUri: "ipfs://<cid>"`; download, view and every shared access answer its public gateway URL.
 * @param signal a client that hangs up stops the fetching.
 * @returns the Document as the owner sees it.
 * @throws AppError FORBIDDEN below editor in an organization; BAD_REQUEST for a CID not accepted, a
 *   directory, no consent, a DAG past the import's budgets; PAYLOAD_TOO_LARGE over 250 MB (as soon as the
 *   UnixFS root says so); RATE_LIMITED when every import place is taken (`IPFS_IMPORT_CONCURRENCY` running, as
 *   many waiting) or the tenant holds its share of them (imports wait their turn across tenants);
 *   BAD_GATEWAY for a gateway that is unreachable, times out, fails or sends bytes that are not the CID's;
 *   GATEWAY_TIMEOUT past `IPFS_IMPORT_TIMEOUT_MS`. Nothing is recorded on any failure.
 */
export async function importIpfsDocument(
  em: EntityManager,
  deps: ImportIpfsDeps,
  actor: Actor,
  input: ImportIpfsInput,
  signal: AbortSignal = new AbortController().signal,
): Promise<DocumentDto> {
  const cid = input.cid.trim();
  const doc = await notarize(em, deps, actor, {
    kind: 'reference',
    sourceType: 'ipfs',
    sourceUri: `ipfs://${cid}`,
    source: ipfsSource(deps.ipfs, { ...input, cid }, actor.tenant.id, signal),
  });
  return toDocumentDto(doc);
}

/**
 * The import as an intake: `announce` checks the CID and consent before anything is fetched; `read` fetches
 * the file (root block first: its size, or that it is a directory) and resolves once the verified stream has
 * ended, so a gateway failure mid-file rejects it and nothing is recorded.
 */
function ipfsSource(
  ipfs: IpfsGateways,
  input: ImportIpfsInput,
  tenantId: string,
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
      // The tenant's share of the import slots: one workspace, or a few, cannot keep the others waiting.
      const file = await ipfs.fetchFile(cid, { signal, key: tenantId, use: 'import' });
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
