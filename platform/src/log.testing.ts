import type { Log, LogFields } from './log';

/** One line a `recordingLog` received: its level, its fields (a child's bindings included) and its message. */
export interface RecordedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: LogFields;
  msg: string;
}

/**
 * A `Log` that keeps its lines (children write to the same list, their bindings merged into the fields), for
 * tests that check what code reports: `lines`; `messages(level)`, the messages of one level in order; `texts(level)`,
 * each line of one level as its message and its fields in JSON (`signed {"chain":"evm","txHash":"0x…"}`), for
 * substring checks.
 */
export function recordingLog(): Log & {
  lines: RecordedLine[];
  messages(level: RecordedLine['level']): string[];
  texts(level: RecordedLine['level']): string[];
} {
  const lines: RecordedLine[] = [];
  const make = (bindings: LogFields): Log => {
    const at =
      (level: RecordedLine['level']) =>
      (a: LogFields | string, b?: string): void => {
        if (typeof a === 'string') lines.push({ level, fields: { ...bindings }, msg: a });
        else lines.push({ level, fields: { ...bindings, ...a }, msg: b ?? '' });
      };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return Object.assign(make({}), {
    lines,
    messages: (level: RecordedLine['level']) => lines.filter((l) => l.level === level).map((l) => l.msg),
    texts: (level: RecordedLine['level']) =>
      lines
        .filter((l) => l.level === level)
        .map(
          (l) =>
            `${l.msg} ${JSON.stringify(l.fields, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`,
        ),
  });
}
