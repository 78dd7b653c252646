/**
 * A 60-line router (history API): the path picks a screen from the table in web/routes.tsx, the
 * query string holds a screen's state (so a link or the back button gives the same view).
 */
import type { AnchorHTMLAttributes, ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};
if (typeof window !== "undefined") window.addEventListener("popstate", notify);

/** Go to `to` (a path with an optional query); `replace` keeps the history entry (filters typed). */
export function navigate(to: string, replace = false): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  notify();
}

/** The current path and query; re-renders on every navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, set] = useState(0);
  useEffect(() => {
    const l = () => set((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/**
 * Update some query parameters of the current URL (null or "" removes one); arrays repeat the
 * key. Typing into a filter replaces the entry, a click pushes one.
 */
export function setQuery(changes: Record<string, string | number | string[] | null | undefined>, replace = false): void {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    q.delete(k);
    if (Array.isArray(v)) for (const x of v) q.append(k, x);
    else if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  navigate(location.pathname + (s ? `?${s}` : ""), replace);
}

type LinkProps = AnchorHTMLAttributes & { href: string; children?: ComponentChildren };

/** An <a> that navigates without reloading (a modified click still opens a new tab). */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  const current = location.pathname === href || (href !== "/" && location.pathname.startsWith(`${href}/`));
  return (
    <a href={href} onClick={onClick} aria-current={current ? "page" : undefined} {...rest}>
      {children}
    </a>
  );
}
