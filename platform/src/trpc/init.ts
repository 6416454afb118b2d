import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { RestMeta } from '../http/rest';

/**
 * `initTRPC` with a service's context and the procedure metadata both faces read: trpc-to-openapi's
 * `openapi` (the OpenAPI document, and the REST path `restRouter` serves) and `rest` (`RestMeta`). The service
 * finishes it with `.create({ isDev: false, errorFormatter: formatTrpcError(toAppError) })`. `Meta` is the
 * service's own procedure metadata (e.g. the server's `rateLimit`).
 */
export function initTrpc<Context extends object, Meta extends object = object>() {
  return initTRPC.context<Context>().meta<OpenApiMeta<RestMeta & Meta>>();
}
