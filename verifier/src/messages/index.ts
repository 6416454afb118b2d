import { fillMessage, type TemplateParams } from '@notary/shared/message-template';
import { en } from './en.ts';
import { pt } from './pt.ts';

/**
 * The report's texts as data: a message is a code of the English table (`en.ts`) and its parameters. Each
 * language has one table of templates, `{name}` marking a parameter; a parameter is data (a hash, a URL, a
 * time, a count, a certificate's name, a library's own error text) shown as it is in every language, or
 * another message (rendered in the same language), or a list of messages (joined by `; `). The trust
 * library's problems (`TrustMessage` of `@notary/trust/messages`, codes `trust.*`) are messages of these
 * tables too. Browser-safe: no Node module.
 */

/** The languages a report is rendered in: English (the command line's, and the report JSON's strings) and Brazilian Portuguese. */
export type Lang = 'en' | 'pt';

/** Every message code (the keys of the English table). */
export type MessageCode = keyof typeof en;

export type { TemplateParams };

/** A language's table: a template for every code. */
export type MessageTable = { readonly [K in MessageCode]: string };

/**
 * The parameters table `T`'s templates name that the English template of the same code does not declare, as
 * `code: name` (never when there is none): a language's table is checked with it at compile time.
 */
export type UndeclaredParams<T extends MessageTable> = {
  [K in MessageCode]: Exclude<TemplateParams<T[K]>, ParamsOf<K>> extends infer U extends string
    ? [U] extends [never]
      ? never
      : `${K}: ${U}`
    : never;
}[MessageCode];

/** The parameters code `K` takes: those its English template names. */
export type ParamsOf<K extends MessageCode> = TemplateParams<(typeof en)[K]>;

/** A parameter: data shown as it is, another message, or messages shown as a list (`a; b`). */
export type Param = string | number | Message | readonly Message[];

/** A message: a code and, when its template has parameters, every one of them. */
export type Message = {
  [K in MessageCode]: [ParamsOf<K>] extends [never]
    ? { code: K; params?: undefined }
    : { code: K; params: { readonly [P in ParamsOf<K>]: Param } };
}[MessageCode];

/** The parameters argument of `msg(code, ...)`: none, or an object with every parameter of the code. */
type ParamsArg<K extends MessageCode> = [ParamsOf<K>] extends [never]
  ? []
  : [params: { readonly [P in ParamsOf<K>]: Param }];

/**
 * The message of `code` with `params` (every parameter its template names: a missing one is a compile error).
 * @example msg('check.file.summary', { sha256: 'ab12…' })
 */
export function msg<K extends MessageCode>(code: K, ...params: ParamsArg<K>): Message {
  const [p] = params;
  return (p === undefined ? { code } : { code, params: p }) as Message;
}

/** `items` as one message, separated by commas (`a, b, c`); empty data when there is none. */
export function commaList(items: readonly Message[]): Message {
  const [first, ...rest] = items;
  if (!first) return data('');
  return rest.reduce<Message>((head, tail) => msg('list.comma', { head, tail }), first);
}

/**
 * Text written by a library or another service (an exception's message, an endpoint's own words): shown as
 * it is in every language, since only its author could translate it. The trust library's problems are not
 * such text: they are `trust.*` messages (`@notary/trust/messages`).
 */
export function foreign(text: string): Message {
  return msg('foreign', { error: text });
}

/** A value that is only data (a hash, a time, a name): the same text in every language. */
export function data(value: string | number): Message {
  return msg('data', { value });
}

const TABLES: Readonly<Record<Lang, MessageTable>> = { en, pt };

/**
 * `message` in `lang`: its template with each `{name}` replaced by the parameter (data as it is, a message
 * rendered in `lang`, a list of messages joined by `; `). A code no table has (a report of a later version)
 * renders as its code and parameters, never throws.
 */
export function render(message: Message, lang: Lang): string {
  const table = TABLES[lang];
  return fillMessage(message, (code) =>
    Object.hasOwn(table, code) ? table[code as MessageCode] : undefined,
  );
}

/** Whether `value` (read from a report's JSON) has the shape of a message: an object with a string `code`. */
export function isMessage(value: unknown): value is Message {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    ((value as { params?: unknown }).params === undefined ||
      (typeof (value as { params?: unknown }).params === 'object' &&
        (value as { params?: unknown }).params !== null))
  );
}

/**
 * `message` in `lang` when there is one (a report of this version), else `text` as the report wrote it (a
 * report written before messages: its English).
 */
export function textOf(message: Message | undefined, text: string, lang: Lang): string {
  return message && isMessage(message) ? render(message, lang) : text;
}

/** The source words a report names (an endpoint or other source is data, shown as it is). */
const SOURCE_WORDS: Readonly<Record<string, Message>> = {
  file: msg('source.file'),
  receipt: msg('source.receipt'),
  certificate: msg('source.certificate'),
};

/**
 * An evidence's `source` in `lang`: `file`, `receipt` and `certificate` are words of the report's format and
 * are translated; anything else (an endpoint URL, a path inside an archive) is data.
 */
export function renderSource(source: string, lang: Lang): string {
  const word = Object.hasOwn(SOURCE_WORDS, source) ? SOURCE_WORDS[source] : undefined;
  return word ? render(word, lang) : source;
}

/** `source` as a parameter (see `renderSource`): a message for the format's words, the data otherwise. */
export function sourceParam(source: string): Param {
  return (Object.hasOwn(SOURCE_WORDS, source) ? SOURCE_WORDS[source] : undefined) ?? source;
}

export { en, pt };
