import { DocumentSchema, WebCaptureInputSchema } from '@notary/shared';
import { captureWebPage } from '../../../domain/documents/capture';
import { authedProcedure } from '../../trpc';

/**
 * `POST /api/documents/capture` `{url, consent, fileName?}`: captures the page in an isolated
 * browser and notarizes its WACZ like an upload; 201 Document with `sourceType: "web-capture"` and the
 * screenshot's presigned URL (300 s). 5 a minute (spec, Limits).
 */
export const capture = authedProcedure
  .meta({
    rateLimit: 'webCapture',
    openapi: {
      errorResponses: {
        400: 'Invalid URL, a scheme other than http(s), a destination that is not allowed, or no consent',
        401: 'Missing or invalid session token',
        403: 'Below editor in the organization',
        413: 'Over the 250 MB archive bound or the storage quota',
        429: 'Over 5 captures a minute, the workspace holding its share of the capture queue (CAPTURE_TENANT_MAX), or the queue full',
        502: 'The site could not be reached (DNS, TCP, TLS)',
        503: 'No Chromium on the server (install it or set CHROMIUM_PATH)',
        504: 'The capture did not finish within CAPTURE_TIMEOUT_MS',
      },
      method: 'POST',
      path: '/api/documents/capture',
      summary: 'Capture a web page with consent (WACZ, screenshot, PDF) and notarize it',
      tags: ['documents'],
      protect: true,
      description:
        'The stored file is a WACZ (WARC of every exchange, screenshot, PDF rendering, capture.json); ' +
        'sha256Hash is the WACZ’s. See docs/api.md, Web capture.',
    },
    rest: { status: 201 },
  })
  .input(WebCaptureInputSchema)
  .output(DocumentSchema)
  .mutation(({ ctx, input, signal }) =>
    captureWebPage(ctx.em(), { ...ctx.deps, log: ctx.log }, ctx.actor, input, signal),
  );
