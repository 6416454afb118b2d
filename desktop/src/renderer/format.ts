import type { DocumentDto, PublicDocumentDto } from '@notary/shared';
import { formatBytes } from '@notary/shared/format-bytes';
import { formatBrasiliaAndUtc, formatBrasiliaDate } from '@notary/shared/time';
import type { Language } from '../common/bridge';

/**
 * A file size in the UI language, as the certificate and the verifier page show it (`2.598.727 bytes (2,5 MiB)`).
 */
export function formatSize(bytes: number, language: Language): string {
  return formatBytes(bytes, language === 'pt' ? 'pt-BR' : 'en-US');
}

/**
 * An API time (RFC 3339) in Brasília time and UTC, labelled, in the UI language, whatever this computer's
 * time zone (`@notary/shared/time`: `21/11/2026 06:14:03 (horário de Brasília, UTC−03:00) · 2026-11-21
 * 09:14:03 UTC`): the certificate and the verifier print the same. `—` for none; a value that is not a
 * time is shown as it came.
 */
export function formatDateTime(iso: string | null, language: Language): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return formatBrasiliaAndUtc(date, language);
}

/** The day in Brasília (`21/11/2026`, en `2026-11-21`), for tables; the full time goes in a tooltip. */
export function formatDate(iso: string, language: Language): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return formatBrasiliaDate(date, language);
}

/** `abcd1234…ef56` for long identifiers shown in tight places (the full value stays copyable). */
export function shorten(value: string, head = 10, tail = 6): string {
  return value.length <= head + tail + 1 ? value : `${value.slice(0, head)}…${value.slice(-tail)}`;
}

export function percent(loaded: number, total: number): number {
  if (total <= 0) return 100;
  return Math.min(100, Math.floor((loaded / total) * 100));
}

export type OverallStatus = 'registered' | 'partial' | 'pending';

/** Both chains registered, one of them, or none yet. */
export function overallStatus(
  doc: Pick<DocumentDto | PublicDocumentDto, 'onchainStatus' | 'stacksStatus'>,
): OverallStatus {
  const n = Number(doc.onchainStatus === 'registered') + Number(doc.stacksStatus === 'registered');
  return n === 2 ? 'registered' : n === 1 ? 'partial' : 'pending';
}

/** Explorer links of the spec (On-chain info): `<prefix>/<0xhash>`, `<prefix>/<uid>`, `<prefix>/0x<txid>?chain=`. */
export function explorerLinks(
  doc: Pick<DocumentDto | PublicDocumentDto, 'onchainTxHash' | 'onchainAttestationUid' | 'stacksTxId'>,
  info: {
    explorerTxPrefix: string;
    attestationScanPrefix: string;
    stacksExplorerTxPrefix: string;
    stacksNetwork: string;
  } | null,
): { evmTx: string | null; attestation: string | null; stacksTx: string | null } {
  const join = (prefix: string | undefined, tail: string | null) =>
    prefix && tail ? `${prefix.replace(/\/+$/, '')}/${tail}` : null;
  return {
    evmTx: join(info?.explorerTxPrefix, doc.onchainTxHash),
    attestation: join(info?.attestationScanPrefix, doc.onchainAttestationUid),
    stacksTx:
      info?.stacksExplorerTxPrefix && doc.stacksTxId
        ? `${info.stacksExplorerTxPrefix.replace(/\/+$/, '')}/0x${doc.stacksTxId.replace(/^0x/, '')}?chain=${encodeURIComponent(info.stacksNetwork)}`
        : null,
  };
}
