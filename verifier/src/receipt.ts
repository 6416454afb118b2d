import { z } from 'zod';
import { errorMessage } from './error-message.ts';

/**
 * The notarization receipt: everything needed to verify a notarized file without the service that issued it. One JSON
 * document per notarized file, embedded in every certificate PDF as `receipt.json` and served at
 * `GET /api/documents/:id/receipt`. Its JSON Schema is `docs/receipt.schema.json`, generated from this definition
 * (`npm run schema -w @notary/verify`); docs/verify.md explains each field.
 *
 * Conventions: SHA-256 values (the document, the Merkle tree) are 64 lower-case hex digits without `0x`, as a
 * Document's `sha256Hash`; chain values (EVM addresses, UIDs, transaction hashes, the Stacks txid) carry `0x`
 * as their chains print them. Times are RFC 3339 UTC. A chain leg that is not anchored yet says
 * `status: "pending"` and has no transaction fields: a receipt never invents one.
 *
 * Versioning: `version` changes only when a field changes meaning or a required field is added; a verifier
 * refuses a version it does not know instead of guessing.
 */

/**
 * The newest receipt format version the server writes. Version 2 added the optional `act` (the document's notarial
 * act); version 3 the optional `transparencyLog` (the document's leaf in the service's transparency log, its
 * inclusion proof and the signed checkpoint); version 4 the optional `transparencyLog.anchored` (the log's
 * checkpoint anchored with the document's batch). This package reads all four, each older one being the newer one
 * without what it added. The server writes the oldest version that holds the receipt (`receiptVersionOf`), so
 * that a verifier that reads only up to version 3 still verifies a receipt without `anchored`, and refuses one
 * with it by naming its version rather than ignoring what it cannot judge.
 */
export const RECEIPT_VERSION = 4;
/** Every receipt version this package reads. */
export const RECEIPT_VERSIONS = [1, 2, 3, 4] as const;
/** Value of `format`: identifies a receipt whatever file name it travels under. */
export const RECEIPT_FORMAT = 'notary-receipt';
/** Name of the attachment in certificate PDFs. */
export const RECEIPT_FILE_NAME = 'receipt.json';
/**
 * The Merkle hashing rule (`merkle.hashing`), RFC 6962 section 2.1 with SHA-256: leaf `SHA-256(0x00 || h)`,
 * node `SHA-256(0x01 || left || right)`, an odd node promoted unchanged, and the root of a one-leaf tree is
 * the document hash `h` itself (a batch of one anchors the document's own SHA-256).
 */
export const MERKLE_HASHING = 'sha256-rfc6962';

const Sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .meta({ description: 'SHA-256, 64 lower-case hex digits, no 0x' });
const Bytes32 = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/)
  .meta({ description: '32 bytes, 0x + 64 lower-case hex digits' });
const EvmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .meta({ description: 'EVM address, 0x + 40 hex digits (EIP-55 checksum case or lower case)' });
const StacksContractId = z
  .string()
  .regex(/^S[0-9A-Z]{27,40}\.[a-zA-Z]([a-zA-Z0-9-]){0,39}$/)
  .meta({ description: 'Stacks contract identifier <address>.<name>' });
const Time = z.iso.datetime({ offset: false }).meta({ description: 'RFC 3339 UTC time' });
const Count = z.number().int().nonnegative();

const MerkleSibling = z
  .object({
    position: z.enum(['left', 'right']).meta({
      description: 'Side the sibling is concatenated on: left means SHA-256(0x01 || sibling || running hash)',
    }),
    hash: Sha256Hex,
  })
  .strict();

/** The document's inclusion proof in its anchoring batch. */
const MerkleProofSchema = z
  .object({
    hashing: z.literal(MERKLE_HASHING).meta({
      description:
        'RFC 6962 (2.1) with SHA-256: leaf SHA-256(0x00||h), node SHA-256(0x01||l||r), odd node promoted, a one-leaf tree has root h',
    }),
    leafIndex: Count.meta({ description: 'Position of the document in its batch, 0-based (informational)' }),
    leafCount: z.number().int().positive().meta({
      description: "Leaves in the batch: its documents, and the log's checkpoint last when anchored",
    }),
    siblings: z
      .array(MerkleSibling)
      .max(64)
      .meta({ description: 'From the leaf level up to the root; empty for a batch of one' }),
    root: Sha256Hex.meta({ description: 'The value anchored on every chain' }),
  })
  .strict();

const EvmCommon = {
  network: z.string().min(1).meta({ description: 'e.g. base-sepolia, sepolia, hardhat' }),
  chainId: z.number().int().positive().meta({ description: 'EIP-155 chain id' }),
  schema: z.string().min(1).meta({ description: 'EAS schema definition, e.g. "bytes32 merkleRoot"' }),
  schemaUid: Bytes32.meta({
    description: 'keccak256(abi.encodePacked(schema, resolver, revocable)) (SchemaRegistry _getUID)',
  }),
};

const EvmPending = z
  .object({
    status: z.literal('pending'),
    ...EvmCommon,
    easAddress: EvmAddress.nullable(),
    schemaRegistryAddress: EvmAddress.nullable(),
  })
  .strict();

const EvmRegistered = z
  .object({
    status: z.literal('registered'),
    ...EvmCommon,
    easAddress: EvmAddress.meta({ description: 'The EAS contract the attestation was made on' }),
    schemaRegistryAddress: EvmAddress.nullable().meta({
      description:
        'The SchemaRegistry of that EAS contract (EAS.getSchemaRegistry()); null when not recorded',
    }),
    attestationUid: Bytes32,
    attester: EvmAddress.meta({ description: "The service's signing address (the attestation's attester)" }),
    txHash: Bytes32,
    blockNumber: Count,
    anchoredAt: Time.meta({ description: 'When the service saw the transaction included' }),
  })
  .strict();

/** The EVM leg: an EAS attestation of the Merkle root (`EAS.getAttestation(uid).data` = abi-encoded root). */
const EvmAnchorSchema = z.discriminatedUnion('status', [EvmPending, EvmRegistered]);

const StacksNetwork = z.enum(['mainnet', 'testnet', 'devnet']);

const StacksPending = z
  .object({
    status: z.literal('pending'),
    network: StacksNetwork,
    contractId: StacksContractId.nullable(),
  })
  .strict();

const StacksRegistered = z
  .object({
    status: z.literal('registered'),
    network: StacksNetwork,
    contractId: StacksContractId.meta({
      description: 'The notary contract: (anchor (root (buff 32))) and read-only (get-anchor root)',
    }),
    txId: Bytes32.meta({ description: 'The anchor contract call' }),
    blockHeight: Count.meta({ description: 'Stacks block height of the transaction' }),
    anchoredAt: Time.meta({ description: 'When the service saw the transaction included' }),
  })
  .strict();

/** The Stacks leg: a call `(anchor root)` to the notary contract; `(get-anchor root)` reads it back. */
const StacksAnchorSchema = z.discriminatedUnion('status', [StacksPending, StacksRegistered]);

/** An RFC 3161 timestamp over the document's SHA-256. */
const TimestampSchema = z
  .object({
    token: z
      .string()
      .regex(/^[A-Za-z0-9+/]+={0,2}$/)
      .meta({ description: 'DER TimeStampToken (a CMS ContentInfo, RFC 3161 2.4.2), base64' }),
    genTime: Time.meta({ description: 'genTime of the token (TSTInfo)' }),
  })
  .strict();

const Verdict = z.boolean().nullable().meta({ description: 'null when it could not be checked' });

/** One signature the notarized PDF already carried, as a validator's report would describe it then. */
const OriginalSignatureSchema = z
  .object({
    index: z.number().int().positive().meta({ description: '1-based, in the order of the signed ends' }),
    kind: z.enum(['signature', 'document-timestamp']),
    signer: z.string().nullable().meta({ description: "Subject of the signer's (or TSA's) certificate" }),
    issuer: z.string().nullable(),
    serialNumber: z.string().nullable().meta({ description: 'Of the certificate, hex' }),
    claimedTime: Time.nullable().meta({ description: 'The dictionary /M: a claim of the signer, no proof' }),
    signingTime: Time.nullable().meta({ description: 'The CMS signingTime attribute: a claim too' }),
    timestamp: z
      .object({
        genTime: Time,
        tsa: z.string().nullable(),
        imprint: z.boolean().meta({ description: 'The token imprints the signature value (or the ranges)' }),
        signature: z.boolean().meta({ description: "The token's own signature verifies" }),
      })
      .strict()
      .nullable()
      .meta({ description: 'RFC 3161 signature timestamp, or the token of a document timestamp' }),
    filter: z.string().nullable(),
    subFilter: z.string().nullable(),
    policyOid: z.string().nullable().meta({ description: 'Signature policy identifier (e.g. ICP-Brasil)' }),
    coverage: z
      .object({
        wellFormed: z.boolean().meta({ description: '/ByteRange [0 a b c] around exactly its /Contents' }),
        problem: z.string().nullable(),
        revision: z.number().int().positive().nullable().meta({ description: 'Revision it ends, 1-based' }),
        wholeOriginal: z.boolean().meta({ description: 'Covers the original to its end' }),
        bytesAfter: Count.meta({ description: 'Bytes of the original added after it (later revisions)' }),
      })
      .strict(),
    integrity: z
      .object({
        digestAlgorithm: z.string().nullable(),
        digest: Verdict,
        signature: Verdict,
      })
      .strict(),
    chain: z
      .object({
        status: z.enum(['trusted', 'untrusted', 'not-checked']),
        anchor: z.string().nullable(),
        message: z.string(),
      })
      .strict()
      .meta({ description: 'The signer certificate against the trust anchors, at the notarization time' }),
    revocation: z
      .object({
        dss: z.boolean().meta({ description: 'The original has a /DSS' }),
        vri: z.boolean().meta({ description: 'Its /VRI has an entry for this signature' }),
        dssOcsps: Count,
        dssCrls: Count,
        inSignature: z.boolean().meta({ description: 'Revocation values inside the CMS' }),
      })
      .strict(),
    problem: z.string().nullable().meta({ description: 'Why it could not be read or checked' }),
  })
  .strict();

/** The signatures of the notarized PDF, read when the receipt was made (not judged by `notary-verify`). */
export const OriginalSignaturesSchema = z.discriminatedUnion('status', [
  z
    .object({
      status: z.literal('read'),
      revisions: Count.meta({ description: 'Revisions (%%EOF markers) of the original' }),
      signatures: z.array(OriginalSignatureSchema).max(64),
    })
    .strict(),
  z.object({ status: z.literal('unreadable'), reason: z.string() }).strict(),
]);

/** The kinds of notarial act (`NOTARIAL_ACT_TYPES` of the service). */
const ACT_TYPES = ['ata_notarial', 'autenticacao', 'procuracao', 'escritura', 'testamento', 'outro'] as const;

/**
 * The notarial act the tabelião recorded for the document (version 2): what the service holds beside the
 * document, not a proof (`notary-verify` checks the MNE's date and check digits, and prints the rest).
 */
export const ReceiptActSchema = z
  .object({
    type: z.enum(ACT_TYPES).meta({ description: 'Kind of notarial act' }),
    mne: z
      .string()
      .regex(/^\d{6}\.\d{4}\.\d{2}\.\d{2}\.\d{8}-\d{2}$/)
      .nullable()
      .meta({
        description:
          'Matrícula Notarial Eletrônica (Provimento CNJ 149/2023): CNS, date, sequence and ISO 7064 MOD 97-10 check digits, CCCCCC.AAAA.MM.DD.NNNNNNNN-DD',
      }),
    selo: z
      .object({
        state: z
          .string()
          .regex(/^[A-Z]{2}$/)
          .meta({ description: 'UF of the electronic seal' }),
        code: z.string().min(1).max(64).meta({ description: 'The seal code as printed' }),
      })
      .strict()
      .nullable(),
    book: z.string().max(32).nullable().meta({ description: 'Book (livro), as recorded' }),
    page: z.string().max(32).nullable().meta({ description: 'Page (folha), as recorded' }),
    recordedAt: Time.meta({ description: 'When the act was first recorded with the service' }),
  })
  .strict();

const Base64 = z
  .string()
  .regex(/^[A-Za-z0-9+/]*={0,2}$/)
  .meta({ description: 'Standard base64 with padding' });

/**
 * The log's checkpoint anchored with the document's batch (version 4): the checkpoint the log had signed when the
 * batch was cut is the batch tree's last leaf (leaf value: the SHA-256 of its checkpoint text), so the root the
 * receipt's `evm` and `stacks` legs anchor commits to it; `link` ties the receipt's own leaf to it.
 */
export const ReceiptAnchoredCheckpointSchema = z
  .object({
    checkpoint: z.string().min(1).meta({
      description:
        'The anchored checkpoint, signed by the log (C2SP signed-note of a C2SP tlog-checkpoint; cosignatures may follow)',
    }),
    batchRoot: Sha256Hex.meta({
      description:
        "The batch root that commits to it: the receipt's `merkle.root`, anchored by `evm` and `stacks`",
    }),
    leafIndex: Count.meta({
      description: 'Its leaf in the batch tree: the last one, `merkle.leafCount` - 1',
    }),
    siblings: z.array(MerkleSibling).max(64).meta({
      description:
        'Its proof in the batch tree (`merkle.hashing`), leaf value SHA-256 of the checkpoint text',
    }),
    link: z
      .discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('inclusion').meta({
              description:
                "The receipt's leaf is in the anchored tree: its inclusion proof at the anchored size",
            }),
            proof: z.array(Base64).max(64),
          })
          .strict(),
        z
          .object({
            kind: z.literal('consistency').meta({
              description:
                "The receipt's leaf came after: the consistency proof from the anchored size to the receipt's checkpoint",
            }),
            proof: z.array(Base64).max(128),
          })
          .strict(),
      ])
      .meta({ description: 'Sibling hashes (32 bytes each, base64) as RFC 9162 2.1.3 and 2.1.4 order them' }),
  })
  .strict();

/**
 * The document's leaf in the service's transparency log (version 3): an append-only Merkle tree (RFC 9162 hashing)
 * of one leaf per notarization, published as C2SP tlog-checkpoint signed notes and C2SP tlog-tiles (docs/verify.md,
 * The transparency log).
 */
export const ReceiptTransparencyLogSchema = z
  .object({
    origin: z
      .string()
      .min(1)
      .meta({ description: "The log's origin, also its key's name (C2SP tlog-checkpoint)" }),
    url: z
      .string()
      .min(1)
      .meta({ description: 'URL prefix of the log: <url>/checkpoint, <url>/tile/... (C2SP tlog-tiles)' }),
    verifierKey: z.string().min(1).meta({
      description:
        "The log's Ed25519 verifier key as the log announces it (C2SP signed-note); check against one obtained independently (--log-key)",
    }),
    leafIndex: Count.meta({ description: 'Index of the leaf, 0-based' }),
    entry: Base64.meta({
      description:
        'The leaf bytes (notary-log-leaf/1 text: serial, sha256, time, tenant commitment); leaf hash SHA-256(0x00 || entry)',
    }),
    inclusionProof: z
      .array(Base64)
      .max(64)
      .meta({ description: 'Sibling hashes (32 bytes each, base64), bottom-up (RFC 9162, 2.1.3)' }),
    checkpoint: z.string().min(1).meta({
      description: 'The signed checkpoint the proof leads to (C2SP signed-note of a C2SP tlog-checkpoint)',
    }),
    anchored: ReceiptAnchoredCheckpointSchema.optional().meta({
      description:
        "The log's checkpoint anchored with the document's batch (version 4); absent before the batch is cut, or for a batch cut before the log was anchored",
    }),
  })
  .strict();

/** The receipt (see the module comment). */
export const ReceiptSchema = z
  .object({
    format: z.literal(RECEIPT_FORMAT),
    version: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]).meta({
      description:
        'Format version: 4 (3 is 4 without `transparencyLog.anchored`, 2 is 3 without `transparencyLog`, 1 is 2 without `act`)',
    }),
    service: z
      .object({
        name: z.string().min(1),
        url: z.string().min(1).meta({ description: 'Base URL of the issuing service' }),
      })
      .strict(),
    document: z
      .object({
        id: z.string().min(1),
        serialNumber: z.string().min(1),
        sha256: Sha256Hex.meta({ description: 'SHA-256 of the notarized file' }),
        fileName: z.string(),
        fileSize: Count.meta({ description: 'Bytes' }),
        mimeType: z.string(),
        registeredAt: Time.meta({ description: 'When the service received the file' }),
      })
      .strict(),
    merkle: MerkleProofSchema.nullable().meta({ description: 'Null until the document is in a batch' }),
    evm: EvmAnchorSchema.nullable().meta({ description: 'Null when the service does not anchor on EVM' }),
    stacks: StacksAnchorSchema.nullable().meta({
      description: 'Null when the service does not anchor on Stacks',
    }),
    timestamp: TimestampSchema.nullable().meta({ description: 'Null when no token was issued' }),
    originalSignatures: OriginalSignaturesSchema.optional().meta({
      description:
        'Signatures the notarized PDF already carried, as read at notarization; absent for other files, PDFs without signatures, or when not read',
    }),
    act: ReceiptActSchema.optional().meta({
      description:
        'The notarial act recorded for the document (version 2); absent when none was recorded when the receipt was made',
    }),
    transparencyLog: ReceiptTransparencyLogSchema.optional().meta({
      description:
        "The document's leaf in the transparency log (version 3); absent while the leaf is pending or for a record made before the log",
    }),
  })
  .strict()
  .meta({
    id: 'Receipt',
    title: 'Notarization receipt',
    description:
      'Everything needed to verify a notarized file without the issuing service: its SHA-256, its Merkle proof, the EAS attestation and Stacks anchor of the root, the RFC 3161 token (docs/verify.md)',
  });

export type Receipt = z.infer<typeof ReceiptSchema>;
export type ReceiptMerkleProof = z.infer<typeof MerkleProofSchema>;
export type ReceiptEvmAnchor = z.infer<typeof EvmAnchorSchema>;
export type ReceiptStacksAnchor = z.infer<typeof StacksAnchorSchema>;
export type ReceiptTimestamp = z.infer<typeof TimestampSchema>;
export type ReceiptOriginalSignatures = z.infer<typeof OriginalSignaturesSchema>;
export type ReceiptOriginalSignature = z.infer<typeof OriginalSignatureSchema>;
export type ReceiptAct = z.infer<typeof ReceiptActSchema>;
export type ReceiptTransparencyLog = z.infer<typeof ReceiptTransparencyLogSchema>;
export type ReceiptAnchoredCheckpoint = z.infer<typeof ReceiptAnchoredCheckpointSchema>;

/**
 * The oldest version that holds `receipt` (the version field aside): 4 with `transparencyLog.anchored`, else 3.
 * The server writes it, so a receipt stays readable by every verifier that can judge all of it.
 */
export function receiptVersionOf(receipt: Pick<Receipt, 'transparencyLog'>): 3 | 4 {
  return receipt.transparencyLog?.anchored ? 4 : 3;
}

/** Thrown by `parseReceipt` for input that is not a receipt this version reads. */
export class ReceiptFormatError extends Error {
  override name = 'ReceiptFormatError';
}

/**
 * Validates `input` (parsed JSON, or the JSON text itself) as a receipt of a version this package reads
 * (`RECEIPT_VERSIONS`).
 * @throws ReceiptFormatError naming the first problems (path: message), or an unknown `version`.
 */
export function parseReceipt(input: unknown): Receipt {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input) as unknown;
    } catch (e) {
      throw new ReceiptFormatError(`the receipt is not JSON: ${errorMessage(e)}`);
    }
  }
  if (
    typeof value === 'object' &&
    value !== null &&
    'version' in value &&
    !(RECEIPT_VERSIONS as readonly unknown[]).includes(value.version)
  ) {
    throw new ReceiptFormatError(
      `receipt version ${String(value.version)} is not supported (this verifier reads versions ${RECEIPT_VERSIONS.join(', ')}): a newer notary-verify judges it`,
    );
  }
  const parsed = ReceiptSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new ReceiptFormatError(`not a valid receipt: ${issues}`);
  }
  return parsed.data;
}

/**
 * The receipt as written into certificates: JSON with two-space indentation and a final newline, keys in
 * schema order (stable bytes for the same receipt).
 */
export function serializeReceipt(receipt: Receipt): string {
  return `${JSON.stringify(receipt, null, 2)}\n`;
}

/** The JSON Schema (draft 2020-12) of the receipt, as published in `docs/receipt.schema.json`. */
export function receiptJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(ReceiptSchema, { target: 'draft-2020-12', io: 'output' }) as {
    $defs?: Record<string, Record<string, unknown>>;
  };
  // The registered id puts the whole schema under $defs (for the OpenAPI component): publish it at the root.
  const { $defs = {} } = generated;
  const { Receipt: root, ...others } = $defs;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...root,
    ...(Object.keys(others).length > 0 ? { $defs: others } : {}),
  };
}
