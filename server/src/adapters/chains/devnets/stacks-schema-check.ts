/**
 * In tests, every answer of the Stacks devnet is held to the pinned stacks-core and Hiro schemas
 * (test/harness/stacks-schemas.ts, loaded by path so the product never imports test code); the violations are
 * kept for `takeViolations` and the process-wide record the test guard reads (test/harness/stacks-devnet-guard.ts).
 */
import { randomBytes } from 'node:crypto';

/** A validator module's answer check (test/harness/stacks-schemas.ts `validateStacksAnswer`). */
export type AnswerValidator = (answer: {
  method: string;
  path: string;
  status: number;
  contentType: string | undefined;
  body: string;
  headers: Record<string, string>;
  server: 'node' | 'indexer';
}) => string[];

/** One devnet's schema check: the validator when loaded, and the violations found since the last `take`. */
export interface SchemaCheck {
  readonly validate: AnswerValidator | undefined;
  /** Records a violation (and reports it to `onViolation` or the process-wide record). */
  record(violation: string): void;
  /** The violations recorded since the last call, cleared here and from the process-wide record. */
  take(): string[];
}

/** The process-wide record of violations the test guard reads after each test. */
const VIOLATIONS = Symbol.for('notary.stacks-devnet.violations');
type ViolationRecord = { devnet: string; text: string }[];
function violationRecord(): ViolationRecord {
  const g = globalThis as { [VIOLATIONS]?: ViolationRecord };
  g[VIOLATIONS] ??= [];
  return g[VIOLATIONS];
}

/**
 * The schema check of a new devnet: the validator module at `schemas` (default: the `STACKS_DEVNET_SCHEMAS`
 * environment variable; none without either), violations reported to `onViolation` or else to the
 * process-wide record. @throws Error when the module exports no `validateStacksAnswer`.
 */
export async function openSchemaCheck(options: {
  schemas?: string;
  onViolation?: (violation: string) => void;
}): Promise<SchemaCheck> {
  const schemasPath = options.schemas ?? process.env.STACKS_DEVNET_SCHEMAS;
  const validate = schemasPath ? await loadValidator(schemasPath) : undefined;
  const devnetId = randomBytes(8).toString('hex');
  const violations: string[] = [];
  return {
    validate,
    record: (violation) => {
      violations.push(violation);
      if (options.onViolation) options.onViolation(violation);
      else violationRecord().push({ devnet: devnetId, text: violation });
    },
    take: () => {
      const out = violations.splice(0, violations.length);
      const all = violationRecord();
      for (let i = all.length - 1; i >= 0; i--) if (all[i]?.devnet === devnetId) all.splice(i, 1);
      return out;
    },
  };
}

/** Loads the test validator (a module exporting `validateStacksAnswer`). @throws when it does not. */
async function loadValidator(modulePath: string): Promise<AnswerValidator> {
  const mod = (await import(/* @vite-ignore */ modulePath)) as { validateStacksAnswer?: unknown };
  if (typeof mod.validateStacksAnswer !== 'function') {
    throw new Error(
      `${modulePath}: no validateStacksAnswer export (STACKS_DEVNET_SCHEMAS names the schema validator)`,
    );
  }
  return mod.validateStacksAnswer as AnswerValidator;
}
