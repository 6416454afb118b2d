/**
 * The tabelião's ICP-Brasil A3 token in Electron's main process (a browser cannot reach PKCS#11): the token's
 * PKCS#11 module (`pkcs11js`, PKCS#11 2.40) is loaded from the path the settings name, its certificates that may
 * sign are listed, and the CAdES signed attributes the service prepared are signed on the token; the key never
 * leaves it. The PIN comes from the renderer, is handed only to the token's C_Login, never logged nor stored,
 * and its bytes are zeroed once used. Failures a person meets are `TokenError`s with a sentence in Portuguese
 * or English (`tokenErrorSentence`).
 *
 * Sources: PKCS#11 Cryptographic Token Interface Base Specification 2.40 (C_Login, C_Sign, CKR_*, token flags
 * CKF_USER_PIN_*), RFC 3279 (ECDSA signature value), RFC 5280 4.2.1.3 (key usage).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { errorMessage } from '@notary/shared';
import { allowsSignatures, parseCertificate } from '@notary/trust/cert-path';
import pkcs11js from 'pkcs11js';
import type { NotarySignedRecord } from '../common/bridge';
import { ecdsaRawToDer } from '../common/ecdsa';

/** What went wrong, as a person meets it. */
export type TokenFailure =
  | 'module'
  | 'no-token'
  | 'wrong-pin'
  | 'pin-locked'
  | 'token-removed'
  | 'no-signing-key'
  | 'certificate-expired';

/** A token failure; `triesLeft` when the token says how many PIN tries remain ('one', or 'few'). */
export class TokenError extends Error {
  readonly failure: TokenFailure;
  readonly triesLeft: 'one' | 'few' | undefined;
  constructor(failure: TokenFailure, detail: string, triesLeft?: 'one' | 'few') {
    super(detail);
    this.name = 'TokenError';
    this.failure = failure;
    this.triesLeft = triesLeft;
  }
}

const SENTENCES: Record<TokenFailure, Record<'pt' | 'en', string>> = {
  module: {
    pt: 'O módulo PKCS#11 do token não pôde ser carregado: confira o caminho do driver nas configurações.',
    en: "The token's PKCS#11 module could not be loaded: check the driver path in the settings.",
  },
  'no-token': {
    pt: 'Nenhum token ou cartão foi encontrado: conecte-o e tente de novo.',
    en: 'No token or smart card was found: plug it in and try again.',
  },
  'wrong-pin': { pt: 'PIN incorreto.', en: 'Wrong PIN.' },
  'pin-locked': {
    pt: 'O PIN está bloqueado: desbloqueie-o com o PUK na ferramenta do fabricante do token.',
    en: "The PIN is locked: unlock it with the PUK in the token maker's tool.",
  },
  'token-removed': {
    pt: 'O token foi removido durante a assinatura: conecte-o e assine de novo.',
    en: 'The token was removed while signing: plug it in and sign again.',
  },
  'no-signing-key': {
    pt: 'O token não tem chave de assinatura para este certificado.',
    en: 'The token holds no signing key for this certificate.',
  },
  'certificate-expired': {
    pt: 'O certificado está vencido: ele não pode mais assinar.',
    en: 'The certificate has expired: it can no longer sign.',
  },
};

/** The sentence a person reads for `error`, with the tries left when the token said. */
export function tokenErrorSentence(error: TokenError, lang: 'pt' | 'en'): string {
  const base = SENTENCES[error.failure][lang];
  if (error.failure !== 'wrong-pin' || !error.triesLeft) return base;
  if (error.triesLeft === 'one') {
    return lang === 'pt'
      ? `${base} Resta uma tentativa antes do bloqueio.`
      : `${base} One try is left before it locks.`;
  }
  return lang === 'pt' ? `${base} Restam poucas tentativas.` : `${base} Few tries are left.`;
}

/** A certificate of the token that may sign (end entity, key usage for signatures), with its chain. */
export interface TokenCertificate {
  /** The slot holding it (its handle, hex) and its CKA_ID (hex): what `signOnToken` finds the key by. */
  slot: string;
  id: string;
  label: string;
  subject: string;
  /** ISO 8601. */
  notAfter: string;
  /** The certificate, then its issuers found on the token (DER). */
  chain: Uint8Array[];
}

// PKCS#11 2.40 return values and token flags a person's error is read from.
const CKR_PIN_INCORRECT = 0xa0;
const CKR_PIN_LOCKED = 0xa4;
const CKR_PIN_EXPIRED = 0xa3;
const CKR_DEVICE_REMOVED = 0x32;
const CKR_TOKEN_NOT_PRESENT = 0xe0;
const CKR_SESSION_HANDLE_INVALID = 0xb3;
const CKR_SESSION_CLOSED = 0xb0;
const CKF_TOKEN_INITIALIZED = 0x400;
const CKF_USER_PIN_COUNT_LOW = 0x10000;
const CKF_USER_PIN_FINAL_TRY = 0x20000;
const CKF_USER_PIN_LOCKED = 0x40000;

/**
 * Makes the PKCS#11 binding a module is loaded into: `pkcs11js`'s own by default; tests hand in a stand-in
 * session to reach what a software token never answers (a PIN the token locked).
 */
export type Pkcs11Factory = () => pkcs11js.PKCS11;

const nativePkcs11: Pkcs11Factory = () => new pkcs11js.PKCS11();

/** Runs `work` with the module at `modulePath` loaded and initialized, finalized after. */
function withModule<T>(
  modulePath: string,
  work: (p11: pkcs11js.PKCS11) => T,
  make: Pkcs11Factory = nativePkcs11,
): T {
  const p11 = make();
  try {
    p11.load(modulePath);
    p11.C_Initialize();
  } catch (e) {
    throw new TokenError('module', `PKCS#11 module ${modulePath}: ${errorMessage(e)}`);
  }
  try {
    return work(p11);
  } finally {
    try {
      p11.C_Finalize();
    } catch {
      // A token pulled out may leave the module unable to finalize: nothing more to release.
    }
  }
}

/** The slots holding a token that is initialized (an empty reader slot, or a blank token, holds nothing). */
function initializedSlots(p11: pkcs11js.PKCS11): Buffer[] {
  return p11
    .C_GetSlotList(true)
    .filter((slot) => ((quietly(() => p11.C_GetTokenInfo(slot).flags) ?? 0) & CKF_TOKEN_INITIALIZED) !== 0);
}

/** The objects of `session` matching `template`. */
function find(p11: pkcs11js.PKCS11, session: Buffer, template: pkcs11js.Template): Buffer[] {
  p11.C_FindObjectsInit(session, template);
  try {
    const out: Buffer[] = [];
    for (let h = p11.C_FindObjects(session); h; h = p11.C_FindObjects(session)) out.push(h);
    return out;
  } finally {
    p11.C_FindObjectsFinal(session);
  }
}

/**
 * The certificates of every token present under the module at `modulePath` that may sign documents: not a CA,
 * key usage for signatures; each with its chain as far as the token's own certificates go (a token usually
 * holds its AC's certificates too). No PIN is asked: certificates are public objects.
 * @throws TokenError `module` (the module does not load), `no-token` (no token present).
 */
export function listSigningCertificates(
  modulePath: string,
  make: Pkcs11Factory = nativePkcs11,
): TokenCertificate[] {
  return withModule(
    modulePath,
    (p11) => {
      const slots = initializedSlots(p11);
      if (slots.length === 0) throw new TokenError('no-token', 'no slot has an initialized token');
      const found: { slot: Buffer; id: Buffer; label: string; der: Uint8Array }[] = [];
      for (const slot of slots) {
        const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
        try {
          for (const h of find(p11, session, [
            { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_CERTIFICATE },
          ])) {
            const [value, id, label] = p11.C_GetAttributeValue(session, h, [
              { type: pkcs11js.CKA_VALUE },
              { type: pkcs11js.CKA_ID },
              { type: pkcs11js.CKA_LABEL },
            ]);
            if (!Buffer.isBuffer(value?.value)) continue;
            found.push({
              slot,
              id: Buffer.isBuffer(id?.value) ? id.value : Buffer.alloc(0),
              label: Buffer.isBuffer(label?.value) ? label.value.toString('utf8') : '',
              der: new Uint8Array(value.value),
            });
          }
        } finally {
          p11.C_CloseSession(session);
        }
      }
      const all = found.map((f) => f.der);
      return found.flatMap((f) => {
        const x509 = new X509Certificate(f.der);
        const parsed = parseCertificate(f.der);
        if (x509.ca || !parsed || !allowsSignatures(parsed)) return [];
        return [
          {
            slot: f.slot.toString('hex'),
            id: f.id.toString('hex'),
            label: f.label,
            subject: x509.subject.replace(/\n/g, ', '),
            notAfter: new Date(x509.validTo).toISOString(),
            chain: chainOf(f.der, all),
          },
        ];
      });
    },
    make,
  );
}

/** `leaf`, then each issuer among `pool` (by name, proven by signature) up to a self-signed one. */
function chainOf(leaf: Uint8Array, pool: readonly Uint8Array[]): Uint8Array[] {
  const chain = [leaf];
  for (let current = new X509Certificate(leaf); chain.length < 8; ) {
    if (current.checkIssued(current) && current.verify(current.publicKey)) break;
    const issuer = pool
      .map((der) => ({ der, x509: new X509Certificate(der) }))
      .find(({ x509 }) => current.checkIssued(x509) && current.verify(x509.publicKey));
    if (!issuer || chain.some((c) => Buffer.compare(c, issuer.der) === 0)) break;
    chain.push(issuer.der);
    current = issuer.x509;
  }
  return chain;
}

/**
 * Refuses a certificate past its `notAfter` (ISO 8601) at `now`: checked before the PIN is used or anything is
 * sent, since the service would refuse the signature anyway (RFC 5280 4.1.2.5).
 * @throws TokenError `certificate-expired`.
 */
export function assertCurrent(certificate: Pick<TokenCertificate, 'notAfter'>, now = new Date()): void {
  if (new Date(certificate.notAfter).getTime() < now.getTime()) {
    throw new TokenError('certificate-expired', `valid until ${certificate.notAfter}`);
  }
}

/** What signing on the token needs. */
export interface TokenSignRequest {
  modulePath: string;
  certificate: Pick<TokenCertificate, 'slot' | 'id' | 'notAfter'>;
  /** The PIN's bytes (UTF-8): zeroed by this function whatever happens. */
  pin: Uint8Array;
  /** The bytes to sign with SHA-256: the CAdES signed attributes the service answered. */
  data: Uint8Array;
  now?: Date;
  pkcs11?: Pkcs11Factory;
}

/**
 * Signs `data` with the token's private key of the certificate: RSA with CKM_SHA256_RSA_PKCS (PKCS#1 v1.5 over
 * SHA-256), EC with CKM_ECDSA over the SHA-256 digest, its raw r‖s written as a DER Ecdsa-Sig-Value (RFC 3279).
 * Logs in as the user with the PIN, logs out and closes the session after; the PIN bytes are zeroed once used.
 * @throws TokenError `certificate-expired` (checked before the PIN is used), `module`, `no-token`, `wrong-pin`
 *   (with `triesLeft` when the token's flags say), `pin-locked`, `token-removed`, `no-signing-key`.
 */
export function signOnToken(request: TokenSignRequest): Uint8Array {
  const { pin } = request;
  try {
    assertCurrent(request.certificate, request.now);
    return withModule(
      request.modulePath,
      (p11) => {
        const slot = initializedSlots(p11).find((s) => s.toString('hex') === request.certificate.slot);
        if (!slot) throw new TokenError('token-removed', 'the slot of the certificate has no token');
        const session = openSession(p11, slot);
        try {
          login(p11, slot, session, pin);
          try {
            return signWithKey(p11, session, Buffer.from(request.certificate.id, 'hex'), request.data);
          } finally {
            quietly(() => p11.C_Logout(session));
          }
        } finally {
          quietly(() => p11.C_CloseSession(session));
        }
      },
      request.pkcs11,
    );
  } finally {
    pin.fill(0);
  }
}

function openSession(p11: pkcs11js.PKCS11, slot: Buffer): Buffer {
  try {
    return p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  } catch (e) {
    throw asTokenError(e);
  }
}

/** C_Login as the user; a wrong PIN reports the tries left from the token's flags read after the failure. */
function login(p11: pkcs11js.PKCS11, slot: Buffer, session: Buffer, pin: Uint8Array): void {
  // PKCS#11 takes the PIN as a string here (pkcs11js): it lives only for this call.
  try {
    p11.C_Login(session, pkcs11js.CKU_USER, Buffer.from(pin).toString('utf8'));
  } catch (e) {
    const error = asTokenError(e);
    if (error.failure !== 'wrong-pin') throw error;
    const flags = quietly(() => p11.C_GetTokenInfo(slot).flags) ?? 0;
    if (flags & CKF_USER_PIN_LOCKED) throw new TokenError('pin-locked', 'the token locked the PIN');
    const tries = flags & CKF_USER_PIN_FINAL_TRY ? 'one' : flags & CKF_USER_PIN_COUNT_LOW ? 'few' : undefined;
    throw new TokenError('wrong-pin', error.message, tries);
  }
}

function signWithKey(p11: pkcs11js.PKCS11, session: Buffer, id: Buffer, data: Uint8Array): Uint8Array {
  try {
    const [key] = find(p11, session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_ID, value: id },
      { type: pkcs11js.CKA_SIGN, value: true },
    ]);
    if (!key) throw new TokenError('no-signing-key', 'no private key with CKA_SIGN has the certificate id');
    const [type] = p11.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_KEY_TYPE }]);
    const keyType = Buffer.isBuffer(type?.value) ? type.value.readUInt32LE(0) : -1;
    if (keyType === pkcs11js.CKK_EC) {
      p11.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, key);
      const digest = createHash('sha256').update(data).digest();
      return ecdsaRawToDer(p11.C_Sign(session, digest, Buffer.alloc(132)));
    }
    p11.C_SignInit(session, { mechanism: pkcs11js.CKM_SHA256_RSA_PKCS }, key);
    return new Uint8Array(p11.C_Sign(session, Buffer.from(data), Buffer.alloc(1024)));
  } catch (e) {
    throw asTokenError(e);
  }
}

/** A PKCS#11 failure as the person's error; a `TokenError` as it is. */
function asTokenError(e: unknown): TokenError {
  if (e instanceof TokenError) return e;
  const code = e instanceof pkcs11js.Pkcs11Error ? e.code : undefined;
  const detail = errorMessage(e);
  if (code === CKR_PIN_INCORRECT) return new TokenError('wrong-pin', detail);
  if (code === CKR_PIN_LOCKED || code === CKR_PIN_EXPIRED) return new TokenError('pin-locked', detail);
  if (
    code === CKR_DEVICE_REMOVED ||
    code === CKR_TOKEN_NOT_PRESENT ||
    code === CKR_SESSION_HANDLE_INVALID ||
    code === CKR_SESSION_CLOSED
  ) {
    return new TokenError('token-removed', detail);
  }
  return new TokenError('module', detail);
}

function quietly<T>(work: () => T): T | undefined {
  try {
    return work();
  } catch {
    return undefined;
  }
}

export type { NotarySignedRecord };

/** What signing a document's certificate with the token needs. */
export interface TokenCertificateSigning {
  /** The service's base URL (no trailing slash) and the session's bearer token. */
  serverUrl: string;
  bearer: string;
  documentId: string;
  policy: 'icp-brasil-ad-rb' | 'icp-brasil-ad-rt';
  modulePath: string;
  certificate: TokenCertificate;
  /** Zeroed once used, as `signOnToken` does, whatever happens. */
  pin: Uint8Array;
  fetch?: typeof fetch;
  now?: Date;
}

/**
 * The tabelião's signature of a document's certificate, end to end (docs/certificates.md, The tabelião's own
 * signature): the session is prepared with the certificate's chain and policy, the attributes answered are
 * signed on the token (`signOnToken`), and the session completed with the value.
 * @returns the signed certificate's record.
 * @throws TokenError as `signOnToken` (an expired certificate before anything is sent); Error with the
 *   service's message and status when it refuses (`status` on the error).
 */
export async function signCertificateWithToken(job: TokenCertificateSigning): Promise<NotarySignedRecord> {
  const { pin } = job;
  try {
    assertCurrent(job.certificate, job.now);
    const base = `${job.serverUrl}/api/documents/${encodeURIComponent(job.documentId)}/notary-signature`;
    const prepared = await callService<{ sessionId: string; signedAttributes: string }>(job, base, 'POST', {
      certificates: job.certificate.chain.map((der) => Buffer.from(der).toString('base64')),
      policy: job.policy,
    });
    const signature = signOnToken({
      modulePath: job.modulePath,
      certificate: job.certificate,
      pin,
      data: new Uint8Array(Buffer.from(prepared.signedAttributes, 'base64')),
      ...(job.now ? { now: job.now } : {}),
    });
    return await callService<NotarySignedRecord>(job, `${base}/${prepared.sessionId}`, 'PUT', {
      signature: Buffer.from(signature).toString('base64'),
    });
  } finally {
    pin.fill(0);
  }
}

/** A JSON call to the service; a refusal as an Error carrying the service's message and `status`. */
async function callService<T>(
  job: Pick<TokenCertificateSigning, 'bearer' | 'fetch'>,
  url: string,
  method: 'POST' | 'PUT',
  body: unknown,
): Promise<T> {
  const res = await (job.fetch ?? fetch)(url, {
    method,
    headers: { authorization: `Bearer ${job.bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await res.json().catch(() => ({}))) as { message?: string };
  if (!res.ok) {
    throw Object.assign(new Error(answer.message ?? `HTTP ${res.status}`), { status: res.status });
  }
  return answer as T;
}
