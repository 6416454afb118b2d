import { accessRouter } from './routers/access';
import { actsRouter } from './routers/acts';
import { anchorProof } from './routers/documents/anchor-proof';
import { ataEnotariado } from './routers/documents/ata-enotariado';
import { capture } from './routers/documents/capture';
import { download } from './routers/documents/download';
import { get } from './routers/documents/get';
import { importIpfs } from './routers/documents/import-ipfs';
import { lgpdDelete } from './routers/documents/lgpd-delete';
import { list } from './routers/documents/list';
import { notarySignatureComplete } from './routers/documents/notary-signature-complete';
import { notarySignaturePrepare } from './routers/documents/notary-signature-prepare';
import { publish } from './routers/documents/publish';
import { receipt } from './routers/documents/receipt';
import { verify } from './routers/documents/verify';
import { view } from './routers/documents/view';
import { monitorsRouter } from './routers/monitors';
import { orgRouter } from './routers/org';
import { publicAcervo } from './routers/public/acervo';
import { publicDocumentByMne } from './routers/public/act';
import { publicDocumentBySerial } from './routers/public/serial';
import { publicVerify } from './routers/public/verify';
import { me } from './routers/session/me';
import { settingsRouter } from './routers/settings';
import { health } from './routers/system/health';
import { onchainInfo } from './routers/system/onchain-info';
import { teamRouter } from './routers/team';
import { createCallerFactory, router } from './trpc';

/** The typed API of the desktop client (`import type { AppRouter }`); REST paths come from the same procedures. */
export const appRouter = router({
  system: router({ health, onchainInfo }),
  public: router({
    verify: publicVerify,
    documentBySerial: publicDocumentBySerial,
    documentByMne: publicDocumentByMne,
    acervo: publicAcervo,
  }),
  documents: router({
    list,
    get,
    download,
    view,
    verify,
    anchorProof,
    receipt,
    notarySignaturePrepare,
    notarySignatureComplete,
    publish,
    lgpdDelete,
    importIpfs,
    capture,
    ataEnotariado,
  }),
  acts: actsRouter,
  monitors: monitorsRouter,
  access: accessRouter,
  settings: settingsRouter,
  session: router({ me }),
  team: teamRouter,
  org: orgRouter,
});

export type AppRouter = typeof appRouter;

/**
 * Calls procedures without HTTP, over a context of `createInnerContext` (tRPC's server-side calls): the same
 * middlewares run (errors mapped from `AppError`, rate limits, authentication), errors are thrown as `TRPCError`.
 */
export const createCaller = createCallerFactory(appRouter);
