/**
 * The message of whatever was thrown (`errorMessage` of `@notary/shared`, bundled into the verifier's one-file
 * builds), imported from here by the verifier's modules.
 */
export { errorMessage } from '@notary/shared/error-message';
