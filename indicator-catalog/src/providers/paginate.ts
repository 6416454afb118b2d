import { createHash } from 'node:crypto';

export interface Page<T> {
  data: T[];
  pagination: { page: number; totalPages: number };
}

export interface WalkResult<T> {
  items: T[];
  /** Pages fetched. */
  pages: number;
  /**
   * True when the walk reached the end: the last page announced by `totalPages`, or an empty page.
   * False when it stopped early (a page that repeats an earlier one, or the page limit): the items are then
   * not the provider's whole list and nothing may be deleted on their evidence.
   */
  complete: boolean;
  /** Why an incomplete walk stopped. */
  stopReason?: string;
}

/**
 * Walks a paginated provider list (spec, Pagination envelope: `{data, pagination:{page,totalPages}}`, pages
 * numbered from 1). Stops at `totalPages` (0 means an empty list), at the first empty page (a provider
 * that overstates `totalPages`), at a page whose data repeats an earlier page (a provider that ignores
 * `page` would otherwise loop forever) and after `maxPages`. Errors of `fetchPage` propagate.
 */
export async function walkPages<T>(
  fetchPage: (page: number) => Promise<Page<T>>,
  options: { maxPages: number; onPage?: (items: T[], page: number) => void },
): Promise<WalkResult<T>> {
  const items: T[] = [];
  const seen = new Map<string, number>();
  let pages = 0;
  for (let page = 1; ; page++) {
    if (page > options.maxPages) {
      return {
        items,
        pages,
        complete: false,
        stopReason: `stopped after ${options.maxPages} pages (the page limit)`,
      };
    }
    const answer = await fetchPage(page);
    pages++;
    if (answer.data.length === 0) return { items, pages, complete: true };
    const fingerprint = createHash('sha256').update(JSON.stringify(answer.data)).digest('hex');
    const earlier = seen.get(fingerprint);
    if (earlier !== undefined) {
      return { items, pages, complete: false, stopReason: `page ${page} repeated page ${earlier}` };
    }
    seen.set(fingerprint, page);
    items.push(...answer.data);
    options.onPage?.(answer.data, page);
    if (page >= answer.pagination.totalPages) return { items, pages, complete: true };
  }
}
