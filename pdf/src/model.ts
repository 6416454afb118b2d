/**
 * What a notarization certificate states (spec, Documents: rule 5): the input of the certificate layout. The server's
 * domain builds it (`server/src/domain/certificates/service.ts`, from the database and configuration only); `render.ts`
 * prints it.
 * Every value is already formatted for print except times (`Date`) and sizes (bytes). A chain whose anchor
 * is not included yet has `status: 'pending'` and no transaction fields: the certificate never invents one.
 */
export type CertificateLanguage = 'pt' | 'en';

export interface EvmAnchorProof {
  status: 'pending' | 'registered';
  /** e.g. `base-sepolia`, `hardhat`. */
  network: string;
  chainId: number;
  /** EAS contract address (0x + 40 hex). Null when unknown (anchoring off). */
  easContract: string | null;
  /** EAS schema UID (0x + 64 hex). */
  schemaUid: string;
  /** The EAS schema definition string, e.g. `bytes32 merkleRoot`. */
  schema: string;
  /** Present when registered. */
  attestationUid: string | null;
  txHash: string | null;
  anchoredAt: Date | null;
  /** `<explorerTxPrefix>/<txHash>`; null when there is no explorer (devnet) or no tx. */
  explorerTxUrl: string | null;
  /** `<attestationScanPrefix>/<uid>`: the permanent attestation, the QR code's target. Null when none. */
  attestationUrl: string | null;
}

export interface StacksAnchorProof {
  status: 'pending' | 'registered';
  /** `mainnet`, `testnet`, `devnet`. */
  network: string;
  /** `<address>.<name>` of the notary contract; null when unknown. */
  contract: string | null;
  /** 0x + 64 hex. */
  txId: string | null;
  anchoredAt: Date | null;
  /** `<stacksExplorerTxPrefix>/0x<txid>?chain=<network>`; null without explorer or tx. */
  explorerTxUrl: string | null;
}

export interface MerkleProofView {
  /** 64 hex, no 0x: the value anchored on both chains. */
  root: string;
  /** Documents in the batch; 1 means the root is the document's own SHA-256. */
  batchSize: number;
  leafIndex: number;
  /** Leaf-to-root sibling hashes (64 hex) and the side each one is concatenated on. */
  siblings: { position: 'left' | 'right'; hash: string }[];
}

export interface CertificateData {
  /** Service name printed in the header and on every stamped page, e.g. `Notary`. */
  serviceName: string;
  /** Base URL of the service, no trailing slash. */
  serviceUrl: string;
  /** Public verification link of this record: `<serviceUrl>/api/public/documents/<serial>`. */
  verifyUrl: string;
  document: {
    id: string;
    serialNumber: string;
    fileName: string;
    fileSize: number;
    mimeType: string;
    /** 64 lower-case hex. */
    sha256Hash: string;
    createdAt: Date;
    /** Tenant (organization or personal workspace) name. */
    tenantName: string;
  };
  consent: {
    given: boolean;
    timestamp: Date;
  };
  /** Null until the document is in an anchoring batch. */
  merkle: MerkleProofView | null;
  /** Null when EVM anchoring is not enabled at all. */
  evm: EvmAnchorProof | null;
  /** Null when Stacks anchoring is not enabled at all. */
  stacks: StacksAnchorProof | null;
  /** When this certificate was generated. */
  issuedAt: Date;
  /** Whether a PAdES signature will be applied (the compliance text says so). */
  signed: boolean;
  /**
   * The PAdES baseline level the signature is made at (ETSI EN 319 142-1: `B-B`, `B-T`, `B-LT`, `B-LTA`),
   * stated by the compliance text when `signed`. The page is rendered before signing: this is the level asked
   * for (`SIGNING_LEVEL`).
   */
  signatureLevel?: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';
  /**
   * Lines printed under the document's fields, already in the certificate's language (e.g. why a PDF source
   * was not stamped: an IPFS import whose gateways failed). None when absent.
   */
  notes?: string[];
  /**
   * The PNG screenshot of a web capture, printed under the document's fields at the content width, its top part when
   * taller than 40% of the page. Plain bytes: the model is copied to the stamping worker. A PNG pdf-lib cannot read is
   * left out (the certificate still issues). None for other sources.
   */
  screenshot?: Uint8Array;
  /**
   * ITI's VALIDAR (validar.iti.gov.br): the access code its user types after reading the QR code of
   * `verifyUrl`, with which that URL hands VALIDAR the signed certificate. Printed beside a QR code of
   * `verifyUrl`. None: no VALIDAR panel.
   */
  validar?: { accessCode: string };
  /**
   * The signatures the original PDF already carried, as read at notarization (the receipt's
   * `originalSignatures`, `@notary/verify/receipt`): listed in their own section. None: no section.
   */
  originalSignatures?: OriginalSignaturesView;
  /**
   * The document's notarial act as recorded when the certificate was issued (a certificate issued again after
   * the act changes shows the new one). None: no section.
   */
  act?: CertificateAct;
}

/** The notarial act the tabelião recorded for the document (`@notary/shared` notarial-act.ts). */
export interface CertificateAct {
  type: 'ata_notarial' | 'autenticacao' | 'procuracao' | 'escritura' | 'testamento' | 'outro';
  /** Canonical MNE, `CCCCCC.AAAA.MM.DD.NNNNNNNN-DD`. */
  mne: string | null;
  selo: { state: string; code: string } | null;
  book: string | null;
  page: string | null;
  recordedAt: Date;
}

/** A signature of the original PDF as the certificate lists it (times RFC 3339; see the receipt schema). */
export interface OriginalSignatureView {
  index: number;
  kind: 'signature' | 'document-timestamp';
  signer: string | null;
  issuer: string | null;
  claimedTime: string | null;
  timestamp: { genTime: string; tsa: string | null; imprint: boolean; signature: boolean } | null;
  filter: string | null;
  subFilter: string | null;
  policyOid: string | null;
  coverage: { wellFormed: boolean; problem: string | null; wholeOriginal: boolean; bytesAfter: number };
  integrity: { digestAlgorithm: string | null; digest: boolean | null; signature: boolean | null };
  chain: { status: 'trusted' | 'untrusted' | 'not-checked'; anchor: string | null; message: string };
  revocation: { dss: boolean; vri: boolean; dssOcsps: number; dssCrls: number; inSignature: boolean };
  problem: string | null;
}

/** The original's signatures, or why they could not be read. */
export type OriginalSignaturesView =
  | { status: 'read'; signatures: OriginalSignatureView[] }
  | { status: 'unreadable'; reason: string };
