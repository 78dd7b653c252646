/**
 * The signed-in top bar: the brand, the navigation and who is signed in with Sign out. On a narrow
 * screen the navigation and sign-out fold behind a "Menu" button (aria-expanded) that closes again
 * on navigation and on Escape, so the screen keeps its height for the content. Used by the
 * organization's app and the operator console alike.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { useLocation } from "./router";

export function TopBar({ brand, navLabel, email, onSignOut, children }: { brand: string; navLabel: string; email: string | undefined; onSignOut: () => void; children: ComponentChildren }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const { path } = useLocation();
  useEffect(() => setMenuOpen(false), [path]);
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setMenuOpen(false);
      menuButton.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [menuOpen]);
  return (
    <header class="topbar">
      <span class="brand">{brand}</span>
      <button type="button" class="menu-button" ref={menuButton} aria-expanded={menuOpen} aria-controls="main-menu" onClick={() => setMenuOpen(!menuOpen)}>
        <span aria-hidden="true">☰</span> Menu
      </button>
      <div id="main-menu" class={`menu${menuOpen ? " open" : ""}`}>
        <nav aria-label={navLabel}>
          <ul>{children}</ul>
        </nav>
        <div class="who">
          <span class="email">{email}</span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </div>
    </header>
  );
}
