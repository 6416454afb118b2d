import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { RestMeta } from '../http/rest';

/**
 * `initTRPC` with a service's context and the procedure metadata both faces read: trpc-to-openapi's
 * `openapi` (the OpenAPI document, and the REST path `restRouter` serves) and `rest` (`RestMeta`). The service
 * finishes it with `.create({ isDev: false, errorFormatter })`: how errors look is its own.
 */
export function initTrpc<Context extends object>() {
  return initTRPC.context<Context>().meta<OpenApiMeta<RestMeta>>();
}
