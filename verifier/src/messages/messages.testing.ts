import { en, isMessage, type Lang, type Message, type Param, render } from './index.ts';

/** The texts of a report a reader sees: its checks' summaries and evidence (and check 6's `notHigher`). */
interface ReportTexts {
  checks: readonly {
    summary: string;
    summaryMessage?: Message;
    evidence: readonly { label: string; value: string; labelMessage?: Message; valueMessage?: Message }[];
    pades?: { notHigher: string[]; notHigherMessages?: Message[] };
  }[];
}

/**
 * Parameters whose data is a library's or an endpoint's own text (an exception's message, a revocation
 * source's reason, what an endpoint answered): shown as it is in every language, so not looked at for English.
 */
const FOREIGN_TEXT_PARAMS = new Set(['error', 'reason', 'answer']);

/** Words that only English prose has: data (hashes, URLs, names, times) never reads like this. */
const ENGLISH = /\b(?:the|is|are|not|of|and|with|without|no|from|by|at|to|does|has|must|only)\b \w/i;

/**
 * The texts of `reports` a reader would see in English in `lang` (for tests: empty means every text is
 * translated): a text without its message (no fallback: it could only be shown as written), or a message
 * with a parameter of data that reads like English prose (a sentence passed as data).
 */
export function untranslatedTexts(reports: readonly ReportTexts[], lang: Lang = 'pt'): string[] {
  const out = new Set<string>();
  const look = (message: Message | undefined, text: string) => {
    if (!message || !isMessage(message)) out.add(`no message: ${text}`);
    else for (const prose of englishData(message)) out.add(`${render(message, lang)} (data: ${prose})`);
  };
  for (const report of reports) {
    for (const c of report.checks) {
      look(c.summaryMessage, c.summary);
      for (const e of c.evidence) {
        look(e.labelMessage, e.label);
        look(e.valueMessage, e.value);
      }
      (c.pades?.notHigher ?? []).forEach((text, i) => {
        look(c.pades?.notHigherMessages?.[i], text);
      });
    }
  }
  return [...out];
}

/** The data parameters of `message` (and of the messages in it) that read like English prose. */
function englishData(message: Message): string[] {
  const found: string[] = [];
  const params: Readonly<Record<string, Param>> = message.params ?? {};
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'number') continue;
    if (typeof value === 'string') {
      if (!FOREIGN_TEXT_PARAMS.has(name) && ENGLISH.test(value)) found.push(value);
    } else if (Array.isArray(value)) {
      for (const m of value as readonly Message[]) found.push(...englishData(m));
    } else {
      found.push(...englishData(value as Message));
    }
  }
  return found;
}

/** The codes of the English table whose Portuguese template is the same text (data, identifiers). */
export function codesAlike(pt: Readonly<Record<string, string>>): string[] {
  return Object.keys(en).filter((code) => pt[code] === en[code as keyof typeof en]);
}
