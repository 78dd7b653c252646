/**
 * A searchable, paged list whose state is the URL's `search`, `page` and `size` (a link or the
 * back button gives the same view). Typing updates the box at once and the URL 150 ms later:
 * the first update of a burst pushes a history entry, the rest replace it. The list loads on
 * every URL change, the latest answer winning (./live-list.ts).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Page } from "../api/client";
import { debouncer, useLive, type LiveData } from "./live-list";
import { navigate, setQuery, useLocation } from "./router";

export interface ListView {
  search: string;
  page: number;
  size: number;
}

const int = (raw: string | null, fallback: number, max: number) => {
  const n = Number(raw);
  return raw !== null && Number.isInteger(n) && n >= 1 && n <= max ? n : fallback;
};

export function readListView(q: URLSearchParams): ListView {
  return { search: (q.get("search") ?? "").slice(0, 200), page: int(q.get("page"), 1, 1_000_000_000), size: int(q.get("size"), 20, 100) };
}

export interface SearchList<T> {
  view: ListView;
  text: string;
  onText: (t: string) => void;
  list: LiveData<Page<T>>;
  setPage: (p: number) => void;
  setSize: (s: number) => void;
  clear: () => void;
}

/**
 * A search box over the URL's `search`: the box shows what is typed at once, and `write` puts it in
 * the URL `delayMs` later (replacing the history entry while typing goes on, pushing one when it
 * starts). When the URL changes under the box (back button, a link), the box shows the URL's search.
 */
export function useUrlSearchBox(urlSearch: string, delayMs: number, write: (text: string, replace: boolean) => void) {
  const [text, setText] = useState(urlSearch);
  const deb = useRef(debouncer(delayMs));
  const typing = useRef(false);
  const written = useRef(urlSearch);
  useEffect(() => {
    if (urlSearch !== written.current) {
      written.current = urlSearch;
      deb.current.cancel();
      typing.current = false;
      setText(urlSearch);
    }
  }, [urlSearch]);
  useEffect(() => () => deb.current.cancel(), []);
  return {
    text,
    onText: (t: string) => {
      setText(t);
      deb.current.schedule(() => {
        written.current = t;
        write(t, typing.current);
        typing.current = true;
      });
    },
    /** The pending search now (Enter). */
    flush: () => deb.current.flush(),
    /** Before another change of the view: the pending search goes first, the next typing pushes anew; answers the search written. */
    settle: (): string => {
      deb.current.flush();
      typing.current = false;
      return written.current;
    },
    /** Drops the pending search (the view is cleared). */
    cancel: () => {
      deb.current.cancel();
      typing.current = false;
    },
  };
}

export function useUrlSearchList<T>(load: (q: { search?: string; page: number; size: number }, signal: AbortSignal) => Promise<Page<T>>): SearchList<T> {
  const { query } = useLocation();
  const view = readListView(query);
  const q = { search: view.search.trim() || undefined, page: view.page, size: view.size };
  const list = useLive(`${q.search ?? ""}|${q.page}|${q.size}`, (signal) => load(q, signal));
  const box = useUrlSearchBox(view.search, 150, (t, replace) => setQuery({ search: t, page: null }, replace));

  // A page past the end (the last row of the last page deleted): the last page instead.
  const data = list.data;
  useEffect(() => {
    if (data && !list.loading && data.items.length === 0 && data.total > 0 && view.page > data.pages) setQuery({ page: data.pages > 1 ? data.pages : null }, true);
  }, [data, list.loading]);

  const commit = (changes: Record<string, string | number | null>, replace = false) => {
    box.settle();
    setQuery(changes, replace);
  };
  return {
    view,
    text: box.text,
    list,
    onText: box.onText,
    setPage: (p) => commit({ page: p > 1 ? p : null }),
    setSize: (s) => commit({ size: s === 20 ? null : s, page: null }),
    clear: () => {
      box.cancel();
      navigate(location.pathname);
    },
  };
}
