import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** The `.eml` files of the service's development mailbox (`DATA_DIR/mail`, `MAIL_DEV=1`); none yet: `[]`. */
export async function mailbox(dataDir: string): Promise<string[]> {
  return (await readdir(path.join(dataDir, 'mail')).catch(() => [] as string[])).filter((f) =>
    f.endsWith('.eml'),
  );
}

/**
 * The 6-digit code of a sign-in mail to `email` that arrived after `known` was listed (`mailbox`), polling
 * every 100 ms. @throws Error after 15 s without one.
 */
export async function mailedCode(dataDir: string, email: string, known: string[]): Promise<string> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    for (const file of (await mailbox(dataDir)).filter((f) => !known.includes(f))) {
      const text = await readFile(path.join(dataDir, 'mail', file), 'utf8');
      const code = /Use the code (\d{6}) /.exec(text)?.[1];
      if (code && text.includes(`To: ${email}`)) return code;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no sign-in code mailed to ${email}`);
}
