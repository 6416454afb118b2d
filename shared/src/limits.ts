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
 * MIME types served inline by the view route (spec, Documents: rule 4). Everything else, SVG and HTML
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

/**
 * Rate limits of the spec (Limits): requests per minute, counted per user when the request carries a valid
 * session token and per client IP otherwise. `global` counts every call of the API (each call of a tRPC batch
 * included); the others count the calls of their procedure or route on top of it, through REST and `/trpc`
 * alike. Upload, IPFS import and timestamp each have their own budget of 10.
 */
export const RATE_LIMITS = {
  global: 120,
  upload: 10,
  ipfsImport: 10,
  timestamp: 10,
  webCapture: 5,
  publicVerify: 30,
  acervo: 60,
} as const;

/** The window of every rate limit of `RATE_LIMITS`, in seconds. */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** A named limit of `RATE_LIMITS`. */
export type RateLimitName = keyof typeof RATE_LIMITS;

/**
 * Team invitation mails (not in the spec; each one mails an address outside the service, which must not become a way to
 * send mail in bulk): at most `perInviter` e-mail invitations by one member and `perOrganization` by one organization
 * in a fixed window of `windowSeconds` (one hour), counted before the invitation is created, renewals included. Over
 * either: 429 `RATE_LIMITED` with `retryAfterSeconds`. Wallet invitations send no mail and are not counted. Off with
 * `RATE_LIMITS=off`; shared by every instance with `REDIS_URL`.
 */
export const INVITATION_MAIL_LIMITS = { perInviter: 20, perOrganization: 50, windowSeconds: 3600 } as const;

/** Most calls in one tRPC batch request (`/trpc/a,b,c`); a larger batch is refused whole with 400. */
export const TRPC_MAX_BATCH_SIZE = 50;

/**
 * The screenshot a web capture takes: the capture viewport's width and the full page cut at `maxHeight`, in CSS
 * pixels, at `deviceScaleFactor` device pixels per CSS pixel (docs/api.md, Web capture); the capture adapter's
 * own constants must agree (a test checks them). The certificate decodes nothing larger (`SCREENSHOT_MAX_PIXELS`).
 */
export const CAPTURE_SCREENSHOT = { width: 1280, maxHeight: 16_384, deviceScaleFactor: 1 } as const;

/**
 * Most pixels of a screenshot printed on a certificate: the largest one a capture makes (`CAPTURE_SCREENSHOT`,
 * 1280 x 16384 at scale 1, about 21 million). Read from the PNG's header before any decoding: a larger image
 * is left off the certificate, which says that it is in the archive.
 */
export const SCREENSHOT_MAX_PIXELS =
  CAPTURE_SCREENSHOT.width *
  CAPTURE_SCREENSHOT.maxHeight *
  CAPTURE_SCREENSHOT.deviceScaleFactor *
  CAPTURE_SCREENSHOT.deviceScaleFactor;
