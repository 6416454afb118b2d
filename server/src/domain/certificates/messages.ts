import type { CertificateLanguage } from '@notary/pdf/model';

/**
 * The sentences the service writes onto a certificate (its notes, the signature's reason, the file name), in
 * Portuguese and English, keyed by a code: what the service knows of the document (an IPFS import's fetch, a
 * web capture's record, the WACZ signature, the attached receipt). The layout's own strings are
 * `@notary/pdf/i18n`'s.
 */

/** One sentence in both languages, over the same arguments. */
const message = <A = undefined>(m: Record<CertificateLanguage, (a: A) => string>) => m;

const MESSAGES = {
  /** `/Reason` of the PAdES signature dictionary. */
  signatureReason: message<{ serial: string }>({
    pt: (a) => `Certificado de notarização ${a.serial}`,
    en: (a) => `Notarization certificate ${a.serial}`,
  }),
  /** The certificate's line naming both signers when the tabelião signs with their own certificate. */
  notarySigners: message<{ service: string; notary: string; issuer: string; profile: string }>({
    pt: (a) =>
      `Assinado por ${a.service} (assinatura do serviço) e por ${a.notary} (certificado ICP-Brasil emitido por ${a.issuer}, política ${a.profile}), cada assinatura em seu próprio campo.`,
    en: (a) =>
      `Signed by ${a.service} (the service's signature) and by ${a.notary} (ICP-Brasil certificate issued by ${a.issuer}, policy ${a.profile}), each signature in its own field.`,
  }),
  /** `/Reason` of the tabelião's signature field. */
  notaryReason: message<{ serial: string }>({
    pt: (a) => `Assinatura do tabelião no certificado de notarização ${a.serial}`,
    en: (a) => `The tabelião's signature of notarization certificate ${a.serial}`,
  }),
  /** Attachment name of the certificate. */
  fileName: message<{ serial: string }>({
    pt: (a) => `certificado-${a.serial}.pdf`,
    en: (a) => `certificate-${a.serial}.pdf`,
  }),
  notStamped: message<{ sourceUri: string | null | undefined; reason: string }>({
    pt: (a) =>
      `Este PDF não foi carimbado: seus bytes (${a.sourceUri}) não puderam ser obtidos e verificados nos gateways IPFS (${a.reason}). Este certificado é emitido como documento separado.`,
    en: (a) =>
      `This PDF was not stamped: its bytes (${a.sourceUri}) could not be fetched and verified from the IPFS gateways (${a.reason}). This certificate is issued as a separate document.`,
  }),
  captureUrls: message<{ requestedUrl: string; finalUrl: string; status: number; redirects: number }>({
    pt: (a) =>
      `Captura web de ${a.requestedUrl}, URL final ${a.finalUrl} (HTTP ${a.status}${a.redirects > 0 ? `, após ${a.redirects} redirecionamento(s)` : ''}).`,
    en: (a) =>
      `Web capture of ${a.requestedUrl}, final URL ${a.finalUrl} (HTTP ${a.status}${a.redirects > 0 ? `, after ${a.redirects} redirect(s)` : ''}).`,
  }),
  captureRun: message<{
    from: string;
    to: string;
    browser: string;
    version: string;
    serverIp: string | null;
  }>({
    pt: (a) =>
      `Capturada de ${a.from} a ${a.to} por ${a.browser} ${a.version}; endereço do servidor ${a.serverIp ?? 'desconhecido'}.`,
    en: (a) =>
      `Captured from ${a.from} to ${a.to} by ${a.browser} ${a.version}; server address ${a.serverIp ?? 'unknown'}.`,
  }),
  captureTls: message<{
    sha256: string;
    subject: string;
    issuer: string;
    validFrom: string;
    validTo: string;
  }>({
    pt: (a) =>
      `Certificado TLS do servidor, SHA-256: ${a.sha256} (${a.subject}; emissor ${a.issuer}; válido de ${a.validFrom} a ${a.validTo}).`,
    en: (a) =>
      `Server TLS certificate SHA-256: ${a.sha256} (${a.subject}; issuer ${a.issuer}; valid from ${a.validFrom} to ${a.validTo}).`,
  }),
  /** `kept` is set when only some origins were kept, the rest counted. */
  captureTlsOrigins: message<{ origins: number; kept: number | undefined }>({
    pt: (a) =>
      `Conexões TLS de ${a.origins} origem(ns) registradas (protocolo, cifra, certificados como o Chromium os verificou${a.kept !== undefined ? `; ${a.kept} guardadas, as demais contadas` : ''}): veja o resumo de proveniência no WACZ.`,
    en: (a) =>
      `TLS connections of ${a.origins} origin(s) recorded (protocol, cipher, certificates as Chromium verified them${a.kept !== undefined ? `; ${a.kept} kept, the rest counted` : ''}): see the provenance summary in the WACZ.`,
  }),
  captureArchive: message({
    pt: () =>
      'O arquivo é um arquivo web WACZ (cada troca HTTP em WARC, captura de tela, renderização em PDF, capture.json); o SHA-256 acima é o do arquivo. Reproduza-o no ReplayWeb.page.',
    en: () =>
      'The file is a WACZ web archive (every HTTP exchange as WARC, screenshot, PDF rendering, capture.json); the SHA-256 above is that of the archive. Replay it in ReplayWeb.page.',
  }),
  waczCheck: message({
    pt: () => 'Verifique-o com notary-verify <arquivo>.wacz.',
    en: () => 'Check it with notary-verify <file>.wacz.',
  }),
  waczSignedAnonymous: message<{ publicKeySha256: string | undefined; check: string }>({
    pt: (a) =>
      `O WACZ é assinado (WACZ Signing and Verification 0.1.0, forma anônima) com a chave própria deste serviço; SHA-256 da sua chave pública: ${a.publicKeySha256}. ${a.check}`,
    en: (a) =>
      `The WACZ is signed (WACZ Signing and Verification 0.1.0, anonymous form) with this service's own key; SHA-256 of its public key: ${a.publicKeySha256}. ${a.check}`,
  }),
  waczTimeIncluded: message<{ tsa: string }>({
    pt: (a) => `com assinatura de tempo RFC 3161 de ${a.tsa}`,
    en: (a) => `with an RFC 3161 time signature from ${a.tsa}`,
  }),
  waczTimeUnavailable: message<{ tsa: string; at: string; reason: string }>({
    pt: (a) =>
      `sem assinatura de tempo: a autoridade de carimbo do tempo ${a.tsa} estava indisponível no momento da captura (${a.at}: ${a.reason})`,
    en: (a) =>
      `without time signature: the time-stamping authority ${a.tsa} was unavailable at capture time (${a.at}: ${a.reason})`,
  }),
  waczTimeNone: message({
    pt: () => 'sem assinatura de tempo (nenhuma autoridade de carimbo do tempo configurada)',
    en: () => 'without time signature (no time-stamping authority configured)',
  }),
  waczSignedDomain: message<{
    domain: string | undefined;
    certificateSha256: string | undefined;
    time: string;
    check: string;
  }>({
    pt: (a) =>
      `O WACZ é assinado (WACZ Signing and Verification 0.1.0) com o certificado de ${a.domain} (SHA-256 ${a.certificateSha256}), ${a.time}. ${a.check}`,
    en: (a) =>
      `The WACZ is signed (WACZ Signing and Verification 0.1.0) with the certificate of ${a.domain} (SHA-256 ${a.certificateSha256}), ${a.time}. ${a.check}`,
  }),
  /** `verify`: the verifier's base URL, ending in `/verify/`. */
  receipt: message<{ file: string; verify: string }>({
    pt: (a) =>
      `Anexo: ${a.file}, o recibo de verificação. Verifique este documento sem este serviço: com Node 20 ou mais recente, node notary-verify.mjs <arquivo> --certificate <este PDF> --evm-rpc <URL> --stacks-api <URL> (baixe ${a.verify}notary-verify.mjs; SHA-256 em ${a.verify}SHA256SUMS); ou no navegador, a página ${a.verify} (salva, ela funciona no seu próprio computador).`,
    en: (a) =>
      `Attached: ${a.file}, the verification receipt. Check this document without this service: with Node 20 or later, node notary-verify.mjs <file> --certificate <this PDF> --evm-rpc <URL> --stacks-api <URL> (download ${a.verify}notary-verify.mjs; SHA-256 in ${a.verify}SHA256SUMS); or in a browser, the page ${a.verify} (saved, it works from your own computer).`,
  }),
};

type Messages = typeof MESSAGES;

/** The codes of the certificate's sentences. */
export type CertificateMessageCode = keyof Messages;

/** The arguments of the sentence `code`. */
export type CertificateMessageArgs<C extends CertificateMessageCode> = Parameters<Messages[C]['pt']>[0];

/**
 * The sentence `code` in `lang`, filled with `args` (none for the sentences without arguments).
 * @example certificateText('en', 'fileName', { serial: 'ABC-123' }) // 'certificate-ABC-123.pdf'
 */
export function certificateText<C extends CertificateMessageCode>(
  lang: CertificateLanguage,
  code: C,
  ...args: CertificateMessageArgs<C> extends undefined ? [] : [CertificateMessageArgs<C>]
): string {
  const render = MESSAGES[code][lang] as (a: CertificateMessageArgs<C> | undefined) => string;
  return render(args[0]);
}
