/**
 * Log port: where code that may not import the logging library (the domain) reports what an operator may want
 * to know, one message per event with structured fields (`{ key }`, `{ err }`). The composition root passes a
 * pino `Logger` (`@notary/platform/log`), which is one; HTTP code passes the request's (`req.log`), whose
 * lines carry the request id.
 */
export interface Log {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Writes nothing: the default where a caller gives no `Log` (library use, tests). */
export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };
