/** Limits of the spec (Limits section). Sizes in bytes, durations in seconds. */
export const LIMITS = {
  maxUploadBytes: 250 * 1024 * 1024,
  downloadUrlSeconds: 300,
  viewUrlSeconds: 300,
  shareDownloadUrlSeconds: 3600,
  shareViewUrlSeconds: 900,
  publicVerifyCacheSeconds: 60,
  acervoCacheSeconds: 300,
} as const;

/**
 * MIME types served inline by the view route (spec, Documents rule 4). Everything else, SVG and HTML
 * included, is forced to download as an attachment because it could run script in our origin.
 */
export const INLINE_MIME_TYPES: ReadonlySet<string> = new Set([
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'text/plain',
]);
