import { sha256Hex } from '@notary/trust/bytes';
import type { Transport } from '@notary/trust/http';
import { type AttachedReceipt, CertificateError, extractReceipt, startsWith } from './certificate.ts';
import { checkEvm } from './evm.ts';
import { merkleProofHolds, recomputeMerkleRoot } from './merkle.ts';
import { data, msg } from './messages/index.ts';
import { checkMne } from './mne.ts';
import { checkPadesSignature } from './pades/index.ts';
import { parseReceipt, type Receipt } from './receipt.ts';
import {
  type ActReport,
  CheckBuilder,
  type CheckId,
  type CheckResult,
  EXIT_CODES,
  notRun,
  outcomeOf,
  type VerifyReport,
} from './report.ts';
import { checkStacks } from './stacks.ts';
import { checkTimestamp } from './timestamp.ts';
import { checkLogProof } from './transparency-log.ts';

/**
 * `notary-verify`'s checking core: runs in Node and in browsers (fetch, WebCrypto; no Node module). It
 * contacts only the endpoints it is given.
 */

export interface VerifyInput {
  /** The notarized file's bytes. */
  file: Uint8Array;
  /** The receipt (parsed JSON or its text); or give `certificate`, whose attached receipt is used. */
  receipt?: unknown;
  /** The certificate PDF's bytes. */
  certificate?: Uint8Array;
  /**
   * The receipt `extractReceipt` read from `certificate` elsewhere (a caller that parses untrusted PDFs only in
   * a bounded worker): used instead of parsing `certificate` again; `certificate` is still needed for check 1's
   * stamped/separate note and for check 6.
   */
  attachedReceipt?: AttachedReceipt;
  /** EVM JSON-RPC endpoints; every one is asked, and they must agree. */
  evmRpcUrls?: string[];
  /** Stacks API endpoints (stacks-core `/v2` and Hiro `/extended`); every one is asked, and they must agree. */
  stacksApiUrls?: string[];
  /** A Hiro API key, sent as `x-api-key` to every Stacks endpoint given (`--stacks-api-key`). */
  stacksApiKey?: string;
  /** DER certificates the RFC 3161 tokens must chain to (`--tsa-ca`). */
  tsaCa?: Uint8Array[];
  /** DER certificates the certificate's PAdES signer must chain to (`--trust-ca`). */
  trustCa?: Uint8Array[];
  /** Blocks required on each chain, the inclusion block counting as 1. Default 1. */
  confirmations?: number;
  /** Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Timeout of one request, ms. Default 15,000. */
  timeoutMs?: number;
  /** The current time (expirations, the chain of a signature without timestamp). Default now. */
  now?: Date;
  /**
   * T, the time check 6 judges the certificate's signature at (`--at`): certificates valid and not revoked at
   * T, or proven by a timestamp to have signed before they expired or were revoked. Default `now`.
   */
  at?: Date;
  /**
   * Check 6 may fetch revocation data the certificate does not carry from its certificates' OCSP and CRL URLs,
   * and the transparency log's current checkpoint and tiles are read from the receipt's log URL to prove the log
   * still extends the receipt's checkpoint (`--online`). Default false: neither makes a request.
   */
  online?: boolean;
  /**
   * The `fetch` of those OCSP and CRL URLs and of the log's URL (`online`), default `fetch`. Anyone can write a
   * URL into a certificate or a receipt, so the command line passes the address policy's fetch (public addresses
   * only, each redirect hop checked) unless `--allow-private`; the EVM and Stacks endpoints are the user's own
   * and keep `fetch`.
   */
  revocationFetch?: typeof fetch;
  /**
   * The checks to run, default all six. The others are reported `not-run`, reason `not-requested` (which
   * leaves the outcome as the requested checks make it): the web verify page runs 1 to 4, which need no trust
   * anchor, and the desktop client runs 5 and 6 apart, in a worker, and merges them.
   */
  checks?: readonly CheckId[];
  /**
   * Verifier keys of the service's transparency log (`--log-key`, C2SP signed-note), obtained apart from the
   * receipt: the receipt's checkpoint must be signed by one of them (`transparency-log.ts`).
   */
  logKeys?: readonly string[];
  /** Witness verifier keys (`--witness`, C2SP tlog-cosignature): the receipt's checkpoint must be cosigned. */
  witnessKeys?: readonly string[];
  /** How many of `witnessKeys` must have cosigned (`--witness-quorum`; default all of them). */
  witnessQuorum?: number;
}

/**
 * Runs checks 1 to 6 in order (see `report.ts` for the statuses and reasons) and reports each with its
 * evidence, then the outcome: `passed` (exit 0) only when every applicable check passed, `failed` (1) when
 * one failed, `incomplete` (3) when none failed but some could not run (no endpoint, a pending leg, no
 * endpoint answered) or ran in part. An endpoint that cannot be read is unavailability, never a failure, and
 * never an exception.
 * @throws ReceiptFormatError when the receipt is not a receipt this version reads; CertificateError when the
 *   certificate is unreadable or carries no receipt (and none is given); TypeError when neither is given.
 */
export async function verify(input: VerifyInput): Promise<VerifyReport> {
  let receipt: Receipt;
  let attached: Awaited<ReturnType<typeof extractReceipt>> | undefined;
  if (input.receipt !== undefined) {
    receipt = parseReceipt(input.receipt);
  } else if (input.attachedReceipt) {
    attached = input.attachedReceipt;
    receipt = parseReceipt(new TextDecoder('utf-8', { fatal: false }).decode(attached.bytes));
  } else if (input.certificate) {
    attached = await extractReceipt(input.certificate);
    receipt = parseReceipt(new TextDecoder('utf-8', { fatal: false }).decode(attached.bytes));
  } else {
    throw new TypeError('give a receipt or a certificate');
  }
  const transport: Transport = {
    fetch: input.fetch ?? globalThis.fetch.bind(globalThis),
    timeoutMs: input.timeoutMs ?? 15_000,
  };
  const now = input.now ?? new Date();
  const confirmations = input.confirmations ?? 1;
  const wanted = new Set<CheckId>(input.checks ?? [1, 2, 3, 4, 5, 6]);
  const run = (id: CheckId, check: () => Promise<CheckResult>): Promise<CheckResult> =>
    wanted.has(id) ? check() : Promise.resolve(notRun(id, 'not-requested', msg('report.notRequested')));
  const checks: CheckResult[] = [
    await run(1, () => checkFile(receipt, input, attached)),
    await run(2, () => checkMerkle(receipt)),
    await run(3, () =>
      checkEvm(receipt, transport, { endpoints: input.evmRpcUrls ?? [], confirmations, now }),
    ),
    await run(4, () =>
      checkStacks(receipt, transport, {
        endpoints: input.stacksApiUrls ?? [],
        confirmations,
        ...(input.stacksApiKey ? { apiKey: input.stacksApiKey } : {}),
      }),
    ),
    await run(5, () => checkTimestamp(receipt, input.tsaCa)),
    await run(6, () =>
      checkPadesSignature(input.certificate, {
        trustCa: input.trustCa,
        tsaCa: input.tsaCa,
        at: input.at ?? now,
        online: input.online === true,
        fetch: input.revocationFetch ?? transport.fetch,
        timeoutMs: transport.timeoutMs,
        original: input.file,
      }),
    ),
  ];
  const transparencyLog = await checkLogProof(
    receipt,
    input.logKeys ?? [],
    {
      keys: input.witnessKeys ?? [],
      ...(input.witnessQuorum === undefined ? {} : { quorum: input.witnessQuorum }),
    },
    input.online === true ? { fetch: input.revocationFetch ?? transport.fetch } : undefined,
  );
  const outcome = outcomeOf(checks);
  // A leaf that contradicts the receipt, a checkpoint the log key did not sign, an anchored checkpoint that is not
  // in the batch or not tied to the leaf, or a log that no longer extends the receipt's (or the anchored)
  // checkpoint (a fork) fails the verification; a log that could not be read online leaves it incomplete, as an
  // endpoint that does not answer.
  if (transparencyLog?.status === 'failed') {
    Object.assign(outcome, { outcome: 'failed', exitCode: EXIT_CODES.failed, ok: false });
  } else if (
    (transparencyLog?.online?.status === 'unavailable' ||
      transparencyLog?.anchored?.online?.status === 'unavailable') &&
    outcome.outcome === 'passed'
  ) {
    Object.assign(outcome, { outcome: 'incomplete', exitCode: EXIT_CODES.incomplete });
  }
  return {
    ...outcome,
    ...(transparencyLog ? { transparencyLog } : {}),
    document: {
      serialNumber: receipt.document.serialNumber,
      sha256: receipt.document.sha256,
      fileName: receipt.document.fileName,
    },
    service: receipt.service,
    checks,
    ...(receipt.act ? { act: actReport(receipt.act) } : {}),
  };
}

/** The receipt's notarial act as the report shows it, its MNE checked (date, check digits). */
function actReport(act: NonNullable<Receipt['act']>): ActReport {
  return { ...act, mneCheck: act.mne === null ? null : checkMne(act.mne) };
}

/** Check 1: the file's SHA-256 is the receipt's; with a certificate, how the certificate holds the receipt. */
async function checkFile(
  receipt: Receipt,
  input: VerifyInput,
  attached: Awaited<ReturnType<typeof extractReceipt>> | undefined,
): Promise<CheckResult> {
  const c = new CheckBuilder(1);
  const hash = await sha256Hex(input.file);
  c.expect(
    hash === receipt.document.sha256,
    data('SHA-256'),
    msg('file.sha256', { hash, bytes: input.file.length, expected: receipt.document.sha256 }),
    'file',
  );
  c.expect(
    input.file.length === receipt.document.fileSize,
    msg('file.size'),
    msg('file.sizeValue', { bytes: input.file.length, expected: receipt.document.fileSize }),
    'file',
  );
  if (input.certificate) {
    if (attached) {
      c.expect(
        attached.inAssociatedFiles,
        msg('file.attachment'),
        attached.inAssociatedFiles
          ? msg('file.attachmentListed', {
              relationship: attached.relationship ? data(attached.relationship) : msg('word.absent'),
            })
          : msg('file.attachmentNotListed'),
        'certificate',
      );
    }
    // A stamped certificate is the original PDF followed by an incremental update: its first bytes are the file.
    if (startsWith(input.certificate, input.file)) {
      c.note(msg('file.certificate'), msg('file.stamped', { bytes: input.file.length }), 'certificate');
    } else {
      c.note(msg('file.certificate'), msg('file.separate'), 'certificate');
    }
  }
  return c.result(msg('file.summary', { sha256: `${hash.slice(0, 16)}…` }));
}

/** Check 2: the Merkle proof leads from the document hash to the anchored root. */
async function checkMerkle(receipt: Receipt): Promise<CheckResult> {
  const m = receipt.merkle;
  if (!m) {
    // Without any chain leg the service does not anchor: there is no batch to be in.
    return receipt.evm === null && receipt.stacks === null
      ? notRun(2, 'not-applicable', msg('merkle.notAnchoring'))
      : notRun(2, 'pending', msg('merkle.notInBatchYet'));
  }
  const c = new CheckBuilder(2);
  let computed = msg('merkle.malformed');
  try {
    computed = data(await recomputeMerkleRoot(receipt.document.sha256, m));
  } catch {
    // reported as a mismatch below
  }
  c.note(
    msg('merkle.rule'),
    msg('merkle.ruleValue', { hashing: m.hashing, leaf: m.leafIndex, leaves: m.leafCount }),
  );
  c.expect(
    await merkleProofHolds(receipt.document.sha256, m, m.root),
    msg('merkle.recomputedRoot'),
    msg(m.siblings.length === 1 ? 'merkle.fromSibling' : 'merkle.fromSiblings', {
      computed,
      root: m.root,
      siblings: m.siblings.length,
    }),
  );
  if (m.siblings.length === 0) {
    c.expect(
      m.leafCount === 1,
      msg('merkle.batchOfOne'),
      msg('merkle.noSiblings', { leafCount: m.leafCount }),
    );
  }
  return c.result(
    m.siblings.length === 0 ? msg('merkle.summaryOne') : msg('merkle.summary', { leaves: m.leafCount }),
  );
}

export { CertificateError };
