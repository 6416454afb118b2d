/**
 * Sign-in by e-mailed one-time code: better-auth's `emailOTP` plugin (6 digits, valid 5 minutes, 3 attempts,
 * single use, stored hashed), mailed with the service's own wording; wallet users' placeholder addresses are
 * never mailed.
 * ```
 * POST /api/auth/email-otp/send-verification-otp   {"email":"ana@example.com","type":"sign-in"}
 * POST /api/auth/sign-in/email-otp                 {"email":"ana@example.com","otp":"123456"}
 * ```
 */
import { emailOTP } from 'better-auth/plugins';
import type { Mailer } from '../../../ports/mail';
import { isPlaceholderEmail } from '../../../ports/mail';

/** Length of the e-mailed one-time code (digits). */
export const EMAIL_OTP_LENGTH = 6;
/** Validity of an e-mailed one-time code, seconds. */
export const EMAIL_OTP_TTL_SECONDS = 300;
/** Wrong codes accepted before a code is burnt. */
export const EMAIL_OTP_ATTEMPTS = 3;

/**
 * Asked before each code e-mail (`auth-limits.ts` `admitCodeMail`): false keeps the mail unsent. `request` is
 * the HTTP request that asked for the code, undefined for `auth.api.*` calls.
 */
export type AdmitCodeMail = (email: string, request: Request | undefined) => Promise<boolean>;

/**
 * The `emailOTP` plugin sending its codes through `mailer`, each one admitted by `admit` first: the mail hook
 * is the one place every better-auth route that mails a code goes through, whatever its path.
 */
export function emailOtpPlugin(mailer: Mailer, admit: AdmitCodeMail = async () => true) {
  return emailOTP({
    otpLength: EMAIL_OTP_LENGTH,
    expiresIn: EMAIL_OTP_TTL_SECONDS,
    allowedAttempts: EMAIL_OTP_ATTEMPTS,
    // Only a hash is stored: a database dump reveals no usable code.
    storeOTP: 'hashed',
    async sendVerificationOTP({ email, otp, type }, ctx) {
      // Wallet users' addresses are placeholders: there is no mailbox to reach.
      if (isPlaceholderEmail(email)) return;
      if (!(await admit(email, ctx?.request))) return;
      const purpose = type === 'sign-in' ? 'sign in to' : 'confirm your e-mail address at';
      const minutes = Math.round(EMAIL_OTP_TTL_SECONDS / 60);
      await mailer.send({
        to: email,
        // Not in the subject: subjects end up in mail logs.
        subject: 'Your Notary sign-in code',
        text:
          `Use the code ${otp} to ${purpose} Notary.\n\n` +
          `It is valid for ${minutes} minutes and can be used once. ` +
          'If you did not ask for it, ignore this message.\n',
      });
    },
  });
}
