import { router } from '../../trpc';
import { acervoTokenStatusProcedure } from './acervo-token-status';
import { createAcervoTokenProcedure } from './create-acervo-token';
import { deleteAcervoTokenProcedure } from './delete-acervo-token';

/** Tenant settings (spec, Settings and other routes named but not detailed): `/api/settings/*`. */
export const settingsRouter = router({
  acervoTokenStatus: acervoTokenStatusProcedure,
  createAcervoToken: createAcervoTokenProcedure,
  deleteAcervoToken: deleteAcervoTokenProcedure,
});
