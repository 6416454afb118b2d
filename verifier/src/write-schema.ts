/**
 * Writes `docs/receipt.schema.json` from `ReceiptSchema` (`npm run schema -w @notary/verify`); the schema test
 * fails while the file is out of date.
 */
import { writeFileSync } from 'node:fs';
import { receiptJsonSchema } from './receipt.ts';

const target = new URL('../../docs/receipt.schema.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(receiptJsonSchema(), null, 2)}\n`);
process.stdout.write(`wrote ${target.pathname}\n`);
