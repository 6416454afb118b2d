/**
 * The layout of a capture's WACZ (Webrecorder WACZ 1.1.1), which the service assembles from the capture
 * process's parts and signs (`archive.ts`).
 */

/**
 * Where each file sits in a capture's WACZ. The capture's own files are in `capture/`, one directory deep as
 * WACZ 1.1.1 allows for files of its own ("Other files and directories"): py-wacz's `wacz validate` matches
 * files to `datapackage.json` by their last two path parts, so a file at the root would not be found.
 */
export const WACZ_PATHS = {
  warc: 'archive/data.warc.gz',
  index: 'indexes/index.cdx',
  pages: 'pages/pages.jsonl',
  pdf: 'capture/page.pdf',
  screenshot: 'capture/screenshot.png',
  record: 'capture/capture.json',
  datapackage: 'datapackage.json',
  digest: 'datapackage-digest.json',
} as const;

/** One `resources` entry of `datapackage.json` (Frictionless Data Package: name, path, hash, bytes). */
export interface WaczResource {
  name: string;
  path: string;
  /** `sha256:<hex>`. */
  hash: string;
  bytes: number;
}

/** The descriptive fields of a capture's `datapackage.json` (WACZ 1.1.1, datapackage.json). */
export interface WaczMeta {
  title: string;
  mainPageUrl: string;
  mainPageDate: string;
  software: string;
}

/** An RFC 3339 date-time without fractions (`2026-01-02T03:04:05Z`): the form py-wacz writes and compares. */
export function waczDate(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * `datapackage.json` (WACZ 1.1.1: `profile` data-package, `wacz_version` 1.1.1, `resources`; `title`,
 * `created`, `software`, `mainPageUrl`, `mainPageDate`), JSON with two-space indentation.
 */
export function datapackageJson(resources: WaczResource[], meta: WaczMeta, created: string): Buffer {
  return Buffer.from(
    JSON.stringify(
      {
        profile: 'data-package',
        wacz_version: '1.1.1',
        title: meta.title,
        mainPageUrl: meta.mainPageUrl,
        mainPageDate: meta.mainPageDate,
        created,
        software: meta.software,
        resources,
      },
      null,
      2,
    ),
  );
}
