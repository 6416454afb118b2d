/**
 * The error answers every procedure on one of the caller's documents declares in its OpenAPI operation
 * (spec, Errors: 403 a document outside the caller's tenant, 404 a missing one), and 410 for the routes
 * that refuse a document deleted under the LGPD (download, view, publish, LGPD deletion). A procedure adds
 * its own statuses, or a longer 403 when it also checks the role, after spreading these.
 */
export const DOCUMENT_ERROR_RESPONSES = {
  401: 'Missing or invalid session token',
  403: 'Document of another tenant',
  404: 'No such document',
} as const;

/** `DOCUMENT_ERROR_RESPONSES` plus 410 for a document deleted under the LGPD (spec, Documents). */
export const LIVE_DOCUMENT_ERROR_RESPONSES = {
  ...DOCUMENT_ERROR_RESPONSES,
  410: 'Deleted under the LGPD',
} as const;
