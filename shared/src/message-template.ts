/**
 * Texts as data: a message is a code of a table of templates and its parameters, `{name}` marking a
 * parameter in a template. The trust library's problems and the verifier's report texts are such messages,
 * each rendered by its own tables (the verifier's in English and Portuguese); this is how any of them is
 * filled in. Browser-safe: no Node module.
 */

/** The `{name}` parameters of template `T`, as a union of names (never when it has none). */
export type TemplateParams<T extends string> = T extends `${string}{${infer P}}${infer Rest}`
  ? P | TemplateParams<Rest>
  : never;

/** A message of any table: its code and, when its template has parameters, each of them. */
export interface CodedMessage {
  readonly code: string;
  readonly params?: Readonly<Record<string, CodedParam>> | undefined;
}

/** A parameter: data shown as it is, another message, or messages shown as a list (`a; b`). */
export type CodedParam = string | number | CodedMessage | readonly CodedMessage[];

/**
 * `message` filled in: the template `templateOf` gives for its code with each `{name}` replaced by the
 * parameter (data as it is, a message filled in the same way, a list of messages joined by `; `). A code
 * without a template (a report of a later version) renders as its code and parameters, never throws.
 * @example fillMessage({ code: 'x', params: { n: 2 } }, () => '{n} bytes') // '2 bytes'
 */
export function fillMessage(message: CodedMessage, templateOf: (code: string) => string | undefined): string {
  const template = templateOf(message.code);
  const params: Readonly<Record<string, CodedParam>> = message.params ?? {};
  if (template === undefined) return `${message.code} ${JSON.stringify(params)}`;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    if (isList(value)) return value.map((m) => fillMessage(m, templateOf)).join('; ');
    return fillMessage(value, templateOf);
  });
}

function isList(value: CodedMessage | readonly CodedMessage[]): value is readonly CodedMessage[] {
  return Array.isArray(value);
}
