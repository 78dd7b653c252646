/**
 * A timeline's entries, newest first, read a page at a time: the first `pages` pages again after
 * any change (`version` or `reload`), more with `more()`. Shared by the deal page and the account
 * and contact pages, whose timelines differ only in what they read and how an entry reads.
 */
import { useEffect, useState } from "preact/hooks";

interface Paged<E> {
  items: E[];
  total: number;
  pages: number;
}

export function usePagedTimeline<E>(read: (page: number, signal: AbortSignal) => Promise<Paged<E>>, deps: unknown[]) {
  const [items, setItems] = useState<E[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const [pages, setPages] = useState(1);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const ctl = new AbortController();
    (async () => {
      const all: E[] = [];
      let t = 0;
      for (let page = 1; page <= pages; page++) {
        const p = await read(page, ctl.signal);
        all.push(...p.items);
        t = p.total;
        if (page >= p.pages) break;
      }
      setItems(all);
      setTotal(t);
      setError(null);
    })().catch((e) => !ctl.signal.aborted && setError(e));
    return () => ctl.abort();
  }, [...deps, tick, pages]);

  return { items, setItems, total, error, reload: () => setTick((n) => n + 1), more: () => setPages((p) => p + 1) };
}
