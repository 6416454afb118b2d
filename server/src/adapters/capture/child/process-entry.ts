import { moduleEntry } from '@notary/shared/module-entry';

/**
 * The capture process's entry module (`capture-process.ts` beside this file in the sources, `capture-process.mjs`
 * beside the bundle in the built service), named here so that the service, which starts it, finds it from
 * another folder.
 */
export const CAPTURE_PROCESS_ENTRY: URL = moduleEntry(import.meta.url, 'capture-process');
