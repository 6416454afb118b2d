import { formatBytes } from '@notary/shared/format-bytes';
import { formatBrasiliaAndUtc } from '@notary/shared/time';
import type { CertificateAct, CertificateLanguage } from './model';
import type { PdfAId, PdfAStatement } from './pdfa';

/** `PDF/A-3b`, as `pdfaLabel` writes it (kept here so that the strings need no file access). */
const pdfaName = (id: PdfAId): string => `PDF/A-${id.part}${id.conformance.toLowerCase()}`;

/** Strings of the section on the original's own signatures (`OriginalSignatureView`). */
export interface OriginalSignatureStrings {
  section: string;
  intro: string;
  unreadable: (reason: string) => string;
  heading: (index: number, kind: 'signature' | 'document-timestamp') => string;
  signer: string;
  issuer: string;
  claimedTime: string;
  timestamp: string;
  format: string;
  policy: string;
  coverage: string;
  integrity: string;
  chain: string;
  revocation: string;
  problem: string;
  none: string;
  notCarried: string;
  timestampValue: (genTime: string, tsa: string | null, ok: boolean) => string;
  coverageValue: (v: {
    wellFormed: boolean;
    problem: string | null;
    wholeOriginal: boolean;
    bytesAfter: number;
  }) => string;
  integrityValue: (v: {
    digestAlgorithm: string | null;
    digest: boolean | null;
    signature: boolean | null;
  }) => string;
  chainValue: (v: { status: 'trusted' | 'untrusted' | 'not-checked'; anchor: string | null }) => string;
  revocationValue: (v: {
    dss: boolean;
    vri: boolean;
    dssOcsps: number;
    dssCrls: number;
    inSignature: boolean;
  }) => string;
}

/** Every printed string of the certificate and the page mark, in Portuguese (default) and English. */
export interface CertificateStrings {
  title: string;
  serialLabel: string;
  issuedAt: (time: string) => string;
  page: (n: number, total: number) => string;
  certificateNo: (serial: string) => string;
  continued: string;

  sectionDocument: string;
  fileName: string;
  fileNameNote: string;
  mimeType: string;
  fileSize: string;
  sha256: string;
  registeredAt: string;
  tenant: string;
  documentId: string;
  serial: string;

  sectionVerification: string;
  qrAttestation: string;
  qrPending: string;
  /** Registered on a network without a public attestation explorer (e.g. the devnet), or no EVM anchoring. */
  qrNoExplorer: string;
  publicRecord: string;
  /** Caption of the VALIDAR panel: how ITI's validator reads this certificate through the QR code. */
  validarQr: string;
  /** Label of the VALIDAR access code (one line). */
  validarCode: string;
  /** The section listing the signatures the original PDF already carried. */
  originals: OriginalSignatureStrings;
  /** The section of the document's notarial act (type, MNE, selo, book and page). */
  act: ActStrings;
  /** Caption under a web capture's screenshot; `cropped` when only its top part is shown. */
  screenshotCaption: (cropped: boolean) => string;
  /** In place of a screenshot whose declared size (pixels) is over the cap: where the image is instead. */
  screenshotTooLarge: (width: number, height: number) => string;
  /** In place of a screenshot that could not be read within its bounds: where the image is instead. */
  screenshotUnavailable: string;

  sectionMerkle: string;
  merklePending: string;
  merkleRoot: string;
  batchSize: string;
  leafIndex: string;
  siblings: string;
  siblingsNone: string;
  sibling: (n: number, side: 'left' | 'right') => string;

  sectionEvm: string;
  sectionStacks: string;
  notEnabled: string;
  status: string;
  statusRegistered: string;
  statusPending: string;
  network: string;
  chainId: string;
  easContract: string;
  schemaUid: string;
  schema: string;
  attestationUid: string;
  txHash: string;
  anchoredAt: string;
  explorerTx: string;
  explorerAttestation: string;
  stacksContract: string;
  stacksTxId: string;
  unknown: string;

  sectionConsent: string;
  consentGiven: (time: string) => string;
  consentMissing: string;

  sectionCompliance: string;
  compliance: (opts: {
    signed: boolean;
    evm: boolean;
    stacks: boolean;
    /** PAdES baseline level of the signature (ETSI EN 319 142-1), when known. */
    level?: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';
  }) => string[];

  sectionHowTo: string;
  howTo: (opts: {
    originalBytes: number | null;
    hasSiblings: boolean;
    evm: boolean;
    stacks: boolean;
  }) => string[];

  stamped: (originalBytes: string) => string;
  /** What the file declares of PDF/A (ISO 19005) and, stamped, what the original declared (`pdfa.ts`). */
  pdfa: (statement: PdfAStatement) => string;

  markNotarized: string;
  markVerify: string;
  formatSize: (bytes: number) => string;
  /** A time as the certificate prints it: Brasília time and UTC, labelled (`@notary/shared/time`). */
  formatTime: (time: Date) => string;
}

/** Labels of the notarial act's section. */
export interface ActStrings {
  section: string;
  type: string;
  /** Each kind of act (`CertificateAct['type']`) as printed. */
  types: Record<CertificateAct['type'], string>;
  mne: string;
  selo: string;
  bookPage: string;
  recordedAt: string;
  /** One sentence under the section: the act does not change the proof. */
  note: string;
}

/** What each PAdES level adds to the signature, as the end of the compliance sentence. */
const LEVEL_PT: Record<'B-B' | 'B-T' | 'B-LT' | 'B-LTA', string> = {
  'B-B': '',
  'B-T': ', com um carimbo de tempo RFC 3161 que prova a hora da assinatura',
  'B-LT':
    ', com um carimbo de tempo RFC 3161 e os dados de validação (certificados, respostas OCSP e LCRs) embutidos para verificação futura',
  'B-LTA':
    ', com um carimbo de tempo RFC 3161, os dados de validação (certificados, respostas OCSP e LCRs) embutidos e um carimbo de tempo do documento que os preserva a longo prazo',
};

const LEVEL_EN: Record<'B-B' | 'B-T' | 'B-LT' | 'B-LTA', string> = {
  'B-B': '',
  'B-T': ', with an RFC 3161 timestamp proving when it was made',
  'B-LT':
    ', with an RFC 3161 timestamp and the validation data (certificates, OCSP responses and CRLs) embedded for later verification',
  'B-LTA':
    ', with an RFC 3161 timestamp, the validation data (certificates, OCSP responses and CRLs) embedded and a document timestamp preserving them for the long term',
};

const PT: CertificateStrings = {
  title: 'Certificado de Notarização',
  serialLabel: 'Nº',
  issuedAt: (t) => `Emitido em ${t}`,
  page: (n, total) => `Página ${n} de ${total}`,
  certificateNo: (s) => `Certificado Nº ${s}`,
  continued: '(continuação)',

  sectionDocument: 'Documento',
  fileName: 'Nome do arquivo',
  fileNameNote: 'Caracteres sem glifo na fonte aparecem como U+XXXX.',
  mimeType: 'Tipo (MIME)',
  fileSize: 'Tamanho',
  sha256: 'SHA-256',
  registeredAt: 'Registrado em',
  tenant: 'Titular',
  documentId: 'ID do documento',
  serial: 'Número de série',

  sectionVerification: 'Verificação',
  qrAttestation:
    'O código QR abre o atestado permanente deste registro na blockchain (Ethereum Attestation Service):',
  qrPending:
    'A ancoragem EVM ainda não foi incluída em bloco: o código QR abre a página pública de verificação deste registro, que mostrará o atestado quando ele existir:',
  qrNoExplorer:
    'Esta rede não tem um explorador público de atestados: o código QR abre a página pública de verificação deste registro (os dados do atestado estão abaixo):',
  publicRecord: 'Verificação pública',
  validarQr:
    'Valide a assinatura deste certificado no VALIDAR do ITI (validar.iti.gov.br): em "Ler QR Code", leia este código QR e informe o código de acesso abaixo.',
  validarCode: 'Código de acesso (VALIDAR)',
  act: {
    section: 'Ato notarial',
    type: 'Tipo de ato',
    types: {
      ata_notarial: 'Ata notarial',
      autenticacao: 'Autenticação',
      procuracao: 'Procuração',
      escritura: 'Escritura',
      testamento: 'Testamento',
      outro: 'Outro',
    },
    mne: 'MNE (e-Notariado)',
    selo: 'Selo',
    bookPage: 'Livro e folha',
    recordedAt: 'Registrado no serviço em',
    note: 'O ato é registrado ao lado do documento: o hash, o número de série e os registros em blockchain do documento não mudam com ele. Confira a MNE no e-Notariado.',
  },
  originals: {
    section: 'Assinaturas no documento original',
    intro:
      'O PDF notarizado já trazia estas assinaturas. Elas foram lidas no momento da notarização, como um validador as relataria; este certificado não as torna válidas nem inválidas.',
    unreadable: (reason) => `As assinaturas do documento original não puderam ser lidas: ${reason}`,
    heading: (n, kind) => (kind === 'signature' ? `Assinatura ${n}` : `Carimbo do tempo de documento ${n}`),
    signer: 'Signatário',
    issuer: 'Emissor do certificado',
    claimedTime: 'Hora declarada (/M)',
    timestamp: 'Carimbo do tempo',
    format: 'Formato',
    policy: 'Política de assinatura',
    coverage: 'Abrangência',
    integrity: 'Integridade',
    chain: 'Cadeia de certificação',
    revocation: 'Revogação embutida',
    problem: 'Problema',
    none: 'nenhum',
    notCarried: 'não informado',
    timestampValue: (t, tsa, ok) => `${t}${tsa ? `, por ${tsa}` : ''} (${ok ? 'confere' : 'não confere'})`,
    coverageValue: (v) =>
      !v.wellFormed
        ? `/ByteRange irregular: ${v.problem ?? ''}`
        : v.wholeOriginal
          ? 'todo o documento original'
          : `uma revisão anterior: ${v.bytesAfter} bytes foram acrescentados depois (atualização incremental)`,
    integrityValue: (v) =>
      v.digest === null || v.signature === null
        ? 'não verificada'
        : v.digest && v.signature
          ? `resumo (${v.digestAlgorithm ?? '?'}) e assinatura conferem`
          : `${v.digest ? 'resumo confere' : 'resumo NÃO confere'}; ${v.signature ? 'assinatura confere' : 'assinatura NÃO confere'}`,
    chainValue: (v) =>
      v.status === 'trusted'
        ? `encadeia a ${v.anchor ?? ''}`
        : v.status === 'untrusted'
          ? 'não encadeia a nenhuma âncora de confiança configurada'
          : 'não verificada contra uma âncora de confiança',
    revocationValue: (v) =>
      [
        v.dss
          ? `DSS presente (${v.dssOcsps} OCSP, ${v.dssCrls} LCR)${v.vri ? ', com VRI desta assinatura' : ', sem VRI desta assinatura'}`
          : 'sem DSS',
        ...(v.inSignature ? ['valores de revogação dentro da assinatura'] : []),
      ].join('; '),
  },
  screenshotCaption: (cropped) =>
    cropped
      ? 'Captura de tela da página (parte superior; a página inteira está no arquivo WACZ)'
      : 'Captura de tela da página',
  screenshotTooLarge: (width, height) =>
    `A captura de tela da página (${width} × ${height} pixels) é grande demais para ser mostrada neste certificado. Ela está no arquivo WACZ registrado, coberto pelo SHA-256 acima: a integridade da captura não é afetada.`,
  screenshotUnavailable:
    'A captura de tela da página não pôde ser mostrada neste certificado. Ela está no arquivo WACZ registrado, coberto pelo SHA-256 acima: a integridade da captura não é afetada.',

  sectionMerkle: 'Prova de inclusão (árvore de Merkle)',
  merklePending: 'Pendente — o documento ainda não foi incluído em um lote de ancoragem',
  merkleRoot: 'Raiz de Merkle',
  batchSize: 'Documentos no lote',
  leafIndex: 'Índice da folha',
  siblings: 'Irmãos',
  siblingsNone: 'Nenhum: lote de um documento, a raiz é o próprio SHA-256 do documento',
  sibling: (n, side) => `Irmão ${n} (${side === 'left' ? 'esquerda' : 'direita'})`,

  sectionEvm: 'Ancoragem EVM — Ethereum Attestation Service',
  sectionStacks: 'Ancoragem Stacks',
  notEnabled: 'Não habilitada neste serviço',
  status: 'Situação',
  statusRegistered: 'Registrado',
  statusPending: 'Pendente — ainda não incluído em bloco',
  network: 'Rede',
  chainId: 'chain ID',
  easContract: 'Contrato EAS',
  schemaUid: 'UID do schema',
  schema: 'Schema',
  attestationUid: 'UID do atestado',
  txHash: 'Hash da transação',
  anchoredAt: 'Ancorado em',
  explorerTx: 'Transação no explorador',
  explorerAttestation: 'Atestado (EAS Scan)',
  stacksContract: 'Contrato',
  stacksTxId: 'ID da transação',
  unknown: 'não informado',

  sectionConsent: 'Consentimento',
  consentGiven: (t) =>
    `O titular consentiu, no envio, com o tratamento dos dados do arquivo para a notarização (LGPD, Lei 13.709/2018, Art. 7º, I) — consentimento dado em ${t}.`,
  consentMissing: 'Nenhum consentimento registrado no envio.',

  sectionCompliance: 'Conformidade técnica e jurídica',
  compliance: ({ signed, evm, stacks, level }) => [
    'Integridade: o SHA-256 (FIPS 180-4) acima foi calculado sobre os bytes exatos do arquivo recebido; qualquer alteração do arquivo muda o hash.',
    'Lote: os hashes são agregados em uma árvore de Merkle conforme a RFC 6962, com prefixo 0x00 para folhas e 0x01 para nós internos; em um lote de um único documento a raiz é o próprio hash do documento.',
    ...(evm
      ? [
          'Ancoragem EVM: a raiz de Merkle é registrada em um atestado do Ethereum Attestation Service (EAS), público e permanente.',
        ]
      : []),
    ...(stacks
      ? [
          'Ancoragem Stacks: a raiz de Merkle é registrada por uma chamada ao contrato de notarização na rede Stacks.',
        ]
      : []),
    ...(signed
      ? [
          level
            ? `Assinatura PAdES ${level} (ETSI EN 319 142-1): este PDF recebe uma assinatura eletrônica do serviço, que permite detectar qualquer alteração posterior${LEVEL_PT[level]}.`
            : 'Assinatura: este PDF recebe uma assinatura eletrônica PAdES (ETSI EN 319 142) do serviço, que permite detectar qualquer alteração posterior.',
        ]
      : []),
    'Carimbos de tempo RFC 3161 do hash estão disponíveis separadamente.',
    'Proteção de dados: tratamento com base no consentimento do titular (LGPD, Lei 13.709/2018, Art. 7º, I); o registro público contém apenas o hash, não o conteúdo do arquivo.',
    signed
      ? 'Lei 14.063/2020: a assinatura deste PDF é uma assinatura eletrônica; não é uma assinatura qualificada ICP-Brasil, salvo se o certificado de assinatura for emitido pela ICP-Brasil.'
      : 'Lei 14.063/2020: este certificado não contém assinatura eletrônica, e não é uma assinatura qualificada ICP-Brasil; sua prova vem do hash e das âncoras públicas.',
  ],

  sectionHowTo: 'Como verificar de forma independente',
  howTo: ({ originalBytes, hasSiblings, evm, stacks }) => [
    originalBytes === null
      ? 'Calcule o SHA-256 do arquivo original (por exemplo, sha256sum arquivo) e compare com o hash acima.'
      : `Calcule o SHA-256 do arquivo original e compare com o hash acima. Este PDF contém o original inalterado nos seus primeiros ${originalBytes} bytes, seguidos de uma atualização incremental (ISO 32000-1, 7.5.6) com as marcas e este certificado: head -c ${originalBytes} este.pdf | sha256sum.`,
    hasSiblings
      ? 'Recalcule a raiz de Merkle: h = SHA-256(0x00 ‖ hash do documento); para cada irmão, na ordem, h = SHA-256(0x01 ‖ irmão ‖ h) se ele está à esquerda, ou SHA-256(0x01 ‖ h ‖ irmão) se está à direita; o resultado final deve ser a raiz acima.'
      : 'Confira a raiz de Merkle: em um lote de um documento ela é o próprio SHA-256 do documento; com irmãos, h = SHA-256(0x00 ‖ hash) e, para cada irmão, SHA-256(0x01 ‖ esquerda ‖ direita).',
    ...(evm
      ? [
          'Consulte o atestado EAS (UID acima) e a transação no explorador da rede EVM, e confira que o campo registrado é a raiz de Merkle.',
        ]
      : []),
    ...(stacks
      ? ['Consulte a transação Stacks no explorador e confira a raiz registrada pelo contrato.']
      : []),
    'A página pública de verificação deste registro reúne essas informações, mas nenhuma das verificações acima depende deste serviço.',
  ],

  stamped: (n) =>
    `Este PDF é o documento original (os primeiros ${n} bytes, inalterados) seguido de uma atualização incremental que acrescenta a marca de notarização em cada página e este certificado.`,

  pdfa: ({ produced, original, changes = [] }) => {
    if (original === undefined) {
      return produced
        ? `Este certificado é um arquivo ${pdfaName(produced)} (ISO 19005-3), para arquivamento de longo prazo: fontes incorporadas, perfil de cor sRGB, metadados XMP e os anexos, como o recibo, como arquivos associados.`
        : '';
    }
    if (original === null || produced === null) {
      return 'O original não é PDF/A (não declara conformidade com a ISO 19005); por isso esta cópia carimbada também não é PDF/A. A marca e o certificado usam apenas fontes incorporadas.';
    }
    const how =
      'A marca e o certificado usam fontes incorporadas e cores permitidas pelo perfil de saída (OutputIntent) do original.';
    if (changes.length === 0) {
      return `O original declara ${pdfaName(original)} (ISO 19005) e esta cópia carimbada continua ${pdfaName(produced)}. ${how}`;
    }
    const why = changes.map((c) =>
      c === 'part-3-for-attachment'
        ? 'o recibo (receipt.json) está anexado como arquivo associado, o que só a PDF/A-3 admite'
        : c === 'level-b-untagged'
          ? 'as páginas acrescentadas não são etiquetadas (tagged), o que o nível A exigiria'
          : 'o recibo (receipt.json) está anexado, o que a PDF/A-4 admite no nível F',
    );
    return `O original declara ${pdfaName(original)}; esta cópia declara ${pdfaName(produced)} porque ${why.join(' e ')}. ${how}`;
  },

  markNotarized: 'Notarizado',
  markVerify: 'Verificar',
  formatSize: (bytes) => formatBytes(bytes, 'pt-BR'),
  formatTime: (time) => formatBrasiliaAndUtc(time, 'pt'),
};

const EN: CertificateStrings = {
  title: 'Notarization Certificate',
  serialLabel: 'No.',
  issuedAt: (t) => `Issued ${t}`,
  page: (n, total) => `Page ${n} of ${total}`,
  certificateNo: (s) => `Certificate No. ${s}`,
  continued: '(continued)',

  sectionDocument: 'Document',
  fileName: 'File name',
  fileNameNote: 'Characters the font has no glyph for are shown as U+XXXX.',
  mimeType: 'Type (MIME)',
  fileSize: 'Size',
  sha256: 'SHA-256',
  registeredAt: 'Registered at',
  tenant: 'Owner',
  documentId: 'Document ID',
  serial: 'Serial number',

  sectionVerification: 'Verification',
  qrAttestation:
    'The QR code opens the permanent on-chain attestation of this record (Ethereum Attestation Service):',
  qrPending:
    'The EVM anchor is not included in a block yet: the QR code opens the public verification page of this record, which will show the attestation once it exists:',
  qrNoExplorer:
    'This network has no public attestation explorer: the QR code opens the public verification page of this record (the attestation details are below):',
  publicRecord: 'Public verification',
  validarQr:
    'Validate this certificate\'s signature at ITI\'s VALIDAR (validar.iti.gov.br): under "Ler QR Code", read this QR code and enter the access code below.',
  validarCode: 'Access code (VALIDAR)',
  act: {
    section: 'Notarial act',
    type: 'Type of act',
    types: {
      ata_notarial: 'Ata notarial (notarial record of facts)',
      autenticacao: 'Autenticação (certified copy)',
      procuracao: 'Procuração (power of attorney)',
      escritura: 'Escritura (public deed)',
      testamento: 'Testamento (will)',
      outro: 'Other',
    },
    mne: 'MNE (e-Notariado)',
    selo: 'Seal (selo)',
    bookPage: 'Book and page',
    recordedAt: 'Recorded with the service',
    note: "The act is recorded beside the document: the document's hash, serial number and blockchain anchors do not change with it. Check the MNE at e-Notariado.",
  },
  originals: {
    section: 'Signatures in the original document',
    intro:
      'The notarized PDF already carried these signatures. They were read at notarization, as a validator would report them; this certificate neither validates nor invalidates them.',
    unreadable: (reason) => `The signatures of the original document could not be read: ${reason}`,
    heading: (n, kind) => (kind === 'signature' ? `Signature ${n}` : `Document timestamp ${n}`),
    signer: 'Signer',
    issuer: 'Certificate issuer',
    claimedTime: 'Claimed time (/M)',
    timestamp: 'Timestamp',
    format: 'Format',
    policy: 'Signature policy',
    coverage: 'Coverage',
    integrity: 'Integrity',
    chain: 'Certification path',
    revocation: 'Embedded revocation',
    problem: 'Problem',
    none: 'none',
    notCarried: 'not given',
    timestampValue: (t, tsa, ok) =>
      `${t}${tsa ? `, by ${tsa}` : ''} (${ok ? 'checks out' : 'does NOT check out'})`,
    coverageValue: (v) =>
      !v.wellFormed
        ? `irregular /ByteRange: ${v.problem ?? ''}`
        : v.wholeOriginal
          ? 'the whole original document'
          : `an earlier revision: ${v.bytesAfter} bytes were added after it (incremental update)`,
    integrityValue: (v) =>
      v.digest === null || v.signature === null
        ? 'not checked'
        : v.digest && v.signature
          ? `digest (${v.digestAlgorithm ?? '?'}) and signature check out`
          : `${v.digest ? 'digest checks out' : 'digest does NOT match'}; ${v.signature ? 'signature checks out' : 'signature does NOT verify'}`,
    chainValue: (v) =>
      v.status === 'trusted'
        ? `chains to ${v.anchor ?? ''}`
        : v.status === 'untrusted'
          ? 'chains to none of the configured trust anchors'
          : 'not checked against a trust anchor',
    revocationValue: (v) =>
      [
        v.dss
          ? `DSS present (${v.dssOcsps} OCSP, ${v.dssCrls} CRL)${v.vri ? ', with a VRI for this signature' : ', no VRI for this signature'}`
          : 'no DSS',
        ...(v.inSignature ? ['revocation values inside the signature'] : []),
      ].join('; '),
  },
  screenshotCaption: (cropped) =>
    cropped
      ? 'Screenshot of the page as captured (top part; the whole page is in the WACZ archive)'
      : 'Screenshot of the page as captured',
  screenshotTooLarge: (width, height) =>
    `The screenshot of the page (${width} × ${height} pixels) is too large to show on this certificate. It is in the registered WACZ archive, covered by the SHA-256 above: the integrity of the capture is not affected.`,
  screenshotUnavailable:
    'The screenshot of the page could not be shown on this certificate. It is in the registered WACZ archive, covered by the SHA-256 above: the integrity of the capture is not affected.',

  sectionMerkle: 'Inclusion proof (Merkle tree)',
  merklePending: 'Pending — the document is not in an anchoring batch yet',
  merkleRoot: 'Merkle root',
  batchSize: 'Documents in batch',
  leafIndex: 'Leaf index',
  siblings: 'Siblings',
  siblingsNone: "None: a batch of one, the root is the document's own SHA-256",
  sibling: (n, side) => `Sibling ${n} (${side})`,

  sectionEvm: 'EVM anchoring — Ethereum Attestation Service',
  sectionStacks: 'Stacks anchoring',
  notEnabled: 'Not enabled on this service',
  status: 'Status',
  statusRegistered: 'Registered',
  statusPending: 'Pending — not yet included in a block',
  network: 'Network',
  chainId: 'chain ID',
  easContract: 'EAS contract',
  schemaUid: 'Schema UID',
  schema: 'Schema',
  attestationUid: 'Attestation UID',
  txHash: 'Transaction hash',
  anchoredAt: 'Anchored at',
  explorerTx: 'Transaction on explorer',
  explorerAttestation: 'Attestation (EAS Scan)',
  stacksContract: 'Contract',
  stacksTxId: 'Transaction ID',
  unknown: 'not available',

  sectionConsent: 'Consent',
  consentGiven: (t) =>
    `On upload, the data subject consented to the processing of the file's data for notarization (LGPD, Brazilian Law 13.709/2018, Art. 7, I) — consent given at ${t}.`,
  consentMissing: 'No consent was recorded on upload.',

  sectionCompliance: 'Technical and legal compliance',
  compliance: ({ signed, evm, stacks, level }) => [
    'Integrity: the SHA-256 (FIPS 180-4) above was computed over the exact bytes of the file received; any change to the file changes the hash.',
    "Batching: hashes are aggregated in a Merkle tree per RFC 6962, with a 0x00 prefix for leaves and 0x01 for inner nodes; in a batch of one document the root is the document's own hash.",
    ...(evm
      ? [
          'EVM anchoring: the Merkle root is recorded in a public, permanent Ethereum Attestation Service (EAS) attestation.',
        ]
      : []),
    ...(stacks
      ? [
          'Stacks anchoring: the Merkle root is recorded by a call to the notarization contract on the Stacks network.',
        ]
      : []),
    ...(signed
      ? [
          level
            ? `PAdES ${level} signature (ETSI EN 319 142-1): this PDF carries the service's electronic signature, which reveals any later change${LEVEL_EN[level]}.`
            : "Signature: this PDF carries the service's PAdES electronic signature (ETSI EN 319 142), which reveals any later change.",
        ]
      : []),
    'RFC 3161 timestamps of the hash are available separately.',
    'Data protection: processing based on the data subject’s consent (LGPD, Law 13.709/2018, Art. 7, I); the public record holds only the hash, never the file content.',
    signed
      ? 'Law 14.063/2020: the signature of this PDF is an electronic signature; it is not an ICP-Brasil qualified signature unless the signing certificate is issued under ICP-Brasil.'
      : 'Law 14.063/2020: this certificate carries no electronic signature and is not an ICP-Brasil qualified signature; its proof comes from the hash and the public anchors.',
  ],

  sectionHowTo: 'How to verify independently',
  howTo: ({ originalBytes, hasSiblings, evm, stacks }) => [
    originalBytes === null
      ? 'Compute the SHA-256 of the original file (e.g. sha256sum file) and compare it with the hash above.'
      : `Compute the SHA-256 of the original file and compare it with the hash above. This PDF holds the unchanged original in its first ${originalBytes} bytes, followed by an incremental update (ISO 32000-1, 7.5.6) with the marks and this certificate: head -c ${originalBytes} this.pdf | sha256sum.`,
    hasSiblings
      ? 'Recompute the Merkle root: h = SHA-256(0x00 ‖ document hash); for each sibling, in order, h = SHA-256(0x01 ‖ sibling ‖ h) when it is on the left, or SHA-256(0x01 ‖ h ‖ sibling) when on the right; the final h must equal the root above.'
      : "Check the Merkle root: in a batch of one it is the document's own SHA-256; with siblings, h = SHA-256(0x00 ‖ hash) and, for each sibling, SHA-256(0x01 ‖ left ‖ right).",
    ...(evm
      ? [
          'Look up the EAS attestation (UID above) and the transaction on the EVM network explorer, and check that the recorded field is the Merkle root.',
        ]
      : []),
    ...(stacks
      ? ['Look up the Stacks transaction on the explorer and check the root recorded by the contract.']
      : []),
    'The public verification page of this record gathers this information, but none of the checks above depends on this service.',
  ],

  stamped: (n) =>
    `This PDF is the original document (its first ${n} bytes, unchanged) followed by an incremental update that adds the notarization mark to every page and this certificate.`,

  pdfa: ({ produced, original, changes = [] }) => {
    if (original === undefined) {
      return produced
        ? `This certificate is a ${pdfaName(produced)} file (ISO 19005-3), for long-term archiving: embedded fonts, the sRGB colour profile, XMP metadata and its attachments, such as the receipt, as associated files.`
        : '';
    }
    if (original === null || produced === null) {
      return 'The original is not PDF/A (it declares no ISO 19005 conformance), so this stamped copy is not PDF/A either. The mark and the certificate use embedded fonts only.';
    }
    const how =
      "The mark and the certificate use embedded fonts and colours the original's output intent allows.";
    if (changes.length === 0) {
      return `The original declares ${pdfaName(original)} (ISO 19005) and this stamped copy remains ${pdfaName(produced)}. ${how}`;
    }
    const why = changes.map((c) =>
      c === 'part-3-for-attachment'
        ? 'the receipt (receipt.json) is attached as an associated file, which only PDF/A-3 allows'
        : c === 'level-b-untagged'
          ? 'the added pages are not tagged, which level A would require'
          : 'the receipt (receipt.json) is attached, which PDF/A-4 allows at level F',
    );
    return `The original declares ${pdfaName(original)}; this copy declares ${pdfaName(produced)} because ${why.join(' and ')}. ${how}`;
  },

  markNotarized: 'Notarized',
  markVerify: 'Verify',
  formatSize: (bytes) => formatBytes(bytes, 'en-US'),
  formatTime: (time) => formatBrasiliaAndUtc(time, 'en'),
};

/** The strings of `lang`. */
export function stringsFor(lang: CertificateLanguage): CertificateStrings {
  return lang === 'en' ? EN : PT;
}
