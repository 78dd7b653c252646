/**
 * The signed-in frame: a skip link, the navigation, who is signed in, sign out, the screen. On a
 * narrow screen the navigation and sign-out fold behind a "Menu" button (aria-expanded) that
 * closes again on navigation and on Escape, so the screen keeps its height for the content.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { VerifyBanner } from "../verify-email/banner";
import { Link, useLocation } from "./router";
import { useSession } from "./session";
import { Toasts } from "./toast";

export function Layout({ children }: { children: ComponentChildren }) {
  const { me, signOut } = useSession();
  const admin = me?.user.role === "admin";
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
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">{me?.tenant.name ?? "Workspace"}</span>
        <button type="button" class="menu-button" ref={menuButton} aria-expanded={menuOpen} aria-controls="main-menu" onClick={() => setMenuOpen(!menuOpen)}>
          <span aria-hidden="true">☰</span> Menu
        </button>
        <div id="main-menu" class={`menu${menuOpen ? " open" : ""}`}>
          <nav aria-label="Main">
            <ul>
              <li><Link href="/deals">Deals</Link></li>
              <li><Link href="/accounts">Accounts</Link></li>
              <li><Link href="/contacts">Contacts</Link></li>
              <li><Link href="/pipeline">Pipeline</Link></li>
              {admin && <li><Link href="/team">Team</Link></li>}
              {admin && <li><Link href="/organization">Organization</Link></li>}
              {admin && <li><Link href="/security-log">Security log</Link></li>}
              <li><Link href="/settings">My account</Link></li>
            </ul>
          </nav>
          <div class="who">
            <span class="email">{me?.user.email}</span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <VerifyBanner />
        {children}
      </main>
      <Toasts />
    </div>
  );
}

/** The frame of the signed-out pages (sign-in, signup, the pages mails link to). */
export function PublicFrame({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="public">
      <main id="main" class="card">
        <h1>{title}</h1>
        {children}
      </main>
      <Toasts />
    </div>
  );
}

/** A screen that is not built yet. */
export function Coming({ title }: { title: string }) {
  return (
    <section>
      <h1>{title}</h1>
      <p>This screen is coming soon.</p>
    </section>
  );
}
