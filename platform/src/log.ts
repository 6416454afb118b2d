import { type DestinationStream, type Logger, pino } from 'pino';
import { redactDeep } from './redact';

export type { Logger } from 'pino';

/** Structured fields of a log line (`{ chain: 'evm', batch }`, `{ err }` for an error and its stack). */
export type LogFields = Record<string, unknown>;

/**
 * Where code reports what an operator may want to know: the domain, the jobs and the adapters take one, the
 * composition root passes a pino `Logger` (which is one), a request's code passes the request's (`req.log`,
 * `ctx.log`), whose lines carry its `reqId`. One message per event, the same for every occurrence, with what
 * varies as fields; an error goes as `{ err }` (pino serializes its stack, redacted). The module is a field
 * too, bound once: `log.child({ module: 'anchor' })`, never a `[module]` prefix inside the message.
 *
 * `log.info('batch collected')`, `log.error({ err, chain: 'evm', batch }, 'anchoring failed; retrying')`.
 * The call shapes are pino's (`(fields, message)` or `(message)`), so a pino logger is passed as it is.
 */
export interface Log {
  debug(message: string): void;
  debug(fields: LogFields, message: string): void;
  info(message: string): void;
  info(fields: LogFields, message: string): void;
  warn(message: string): void;
  warn(fields: LogFields, message: string): void;
  error(message: string): void;
  error(fields: LogFields, message: string): void;
  /** A logger whose lines all carry `bindings` besides their own fields. */
  child(bindings: LogFields): Log;
}

/** The levels `LOG_LEVEL` accepts (each service's config parses it), lowest first; `silent` logs nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/**
 * `json`: one JSON object per line (pino's own format: `level`, `time`, `msg`, `module`, `reqId`, ...), for
 * production, where a collector reads stdout. `text`: the message and its plain fields as one readable line,
 * an error's stack below it, for development and tests.
 */
export type LogFormat = 'json' | 'text';

/**
 * Never written to a log line (pino `redact` paths): the session token and cookies of a request logged by
 * `requestLogging`, and the cookies a response sets.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

export interface CreateLoggerOptions {
  level: LogLevel;
  format: LogFormat;
  /**
   * Where lines go (default `stdout`). `stderr` for a command whose stdout is its product (the operator CLI):
   * every line then goes to stderr.
   */
  stream?: 'stdout' | 'stderr';
  /** Receives the JSON lines instead (tests read them); `format` and `stream` are then ignored. */
  destination?: DestinationStream;
}

/** The log format of a `NODE_ENV`: JSON lines in production, readable lines elsewhere. */
export function logFormatFor(nodeEnv: 'development' | 'production' | 'test'): LogFormat {
  return nodeEnv === 'production' ? 'json' : 'text';
}

/**
 * A service's root logger (pino). Code logs through children that name their module
 * (`log.child({ module: 'anchor' })`); the text format shows the module as the line's `[module]` prefix, the
 * JSON format as its `module` field. JSON lines are written synchronously, so nothing is lost when the process exits right after.
 * Text lines go through `console` (debug and info to stdout, warn and error to stderr, or all to stderr), so
 * vitest attributes them to the test that caused them.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const fd = options.stream === 'stderr' ? 2 : 1;
  const destination =
    options.destination ??
    (options.format === 'json' ? pino.destination({ dest: fd, sync: true }) : textDestination(fd === 2));
  return pino(
    { level: options.level, redact: REDACTED_PATHS, serializers: { err: redactedError } },
    destination,
  );
}

/**
 * A child of `log` that writes info and above whatever `LOG_LEVEL` says, `silent` included: the few lines a
 * process has always printed (listening, shutting down, failed to start, start-up warnings), which operators
 * and scripts wait for.
 */
export function lifecycleLogger(log: Logger, module: string): Logger {
  return log.child({ module }, { level: log.isLevelEnabled('debug') ? log.level : 'info' });
}

/**
 * pino's error serializer, then every string of the result redacted (`redactDeep`): libraries put the URL they
 * called into their errors (ethers: the message and `info.requestUrl`), and chain RPC URLs carry API keys.
 */
function redactedError(err: unknown): unknown {
  return redactDeep(err instanceof Error ? pino.stdSerializers.err(err) : err);
}

/** A logger that writes nothing: the default where a caller passes none. */
export const silentLogger: Logger = pino({ level: 'silent' });

/** A `Log` that writes nothing: the default where a caller gives none (library use, tests). */
export const silentLog: Log = silentLogger;

// Fields every line carries (or that `text` shows otherwise): left out of the text line.
const TEXT_OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'module', 'err', 'req', 'res']);

/** pino's JSON line as `msg key=value ...` (plain values only) and the error's stack, through `console`. */
function textDestination(allToStderr: boolean): DestinationStream {
  return {
    write(line: string) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      const fields = Object.entries(entry)
        .filter(([key, value]) => !TEXT_OMITTED.has(key) && (value === null || typeof value !== 'object'))
        .map(([key, value]) => ` ${key}=${String(value)}`)
        .join('');
      const detail = entry.err === undefined ? '' : `\n${errorText(entry.err)}`;
      const msg = String(entry.msg ?? '');
      // The module reads as the line's prefix; the listening lines, which scripts wait for in JSON too, carry
      // their own.
      const prefix = typeof entry.module === 'string' && !msg.startsWith('[') ? `[${entry.module}] ` : '';
      const text = `${prefix}${msg}${fields}${detail}`;
      const level = typeof entry.level === 'number' ? entry.level : 30;
      // Looked up at each line, not bound once: a test's spy on a console method sees the line.
      if (allToStderr || level >= 50) console.error(text);
      else if (level >= 40) console.warn(text);
      else if (level >= 30) console.info(text);
      else console.debug(text);
    },
  };
}

/** An error as pino serialized it (`{type, message, stack}`), or whatever else was logged as `err`. */
function errorText(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { stack, message } = err as { stack?: unknown; message?: unknown };
  return String(stack ?? message ?? JSON.stringify(err));
}
