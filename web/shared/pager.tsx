/** Paging under a list: the total, the page out of pages, previous/next, and the page size. */
export interface PagerProps {
  page: number;
  pages: number;
  total: number;
  size: number;
  /** Plural ("deals"); one of them is said without its final "s". */
  noun?: string;
  onPage: (page: number) => void;
  onSize?: (size: number) => void;
  sizes?: number[];
}

export function Pager({ page, pages, total, size, noun = "items", onPage, onSize, sizes = [20, 50, 100] }: PagerProps) {
  return (
    <nav class="pager" aria-label="Pages">
      <span class="total">
        {total.toLocaleString()} {total === 1 ? noun.replace(/ies$/, "y").replace(/s$/, "") : noun}
      </span>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous
      </button>
      <span aria-live="polite">
        Page {pages === 0 ? 0 : page} of {pages}
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pages}>
        Next
      </button>
      {onSize && (
        <label>
          Per page{" "}
          <select value={String(size)} onChange={(e) => onSize(Number((e.target as HTMLSelectElement).value))}>
            {sizes.map((s) => (
              <option key={s} value={String(s)}>
                {s}
              </option>
            ))}
          </select>
        </label>
      )}
    </nav>
  );
}
