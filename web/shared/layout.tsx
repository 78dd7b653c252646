/**
 * The signed-in frame: a skip link, the top bar (navigation, who is signed in, sign out; folded
 * behind a Menu button on a narrow screen), the screen.
 */
import type { ComponentChildren } from "preact";
import { VerifyBanner } from "../verify-email/banner";
import { Link } from "./router";
import { useSession } from "./session";
import { Toasts } from "./toast";
import { TopBar } from "./top-bar";

export function Layout({ children }: { children: ComponentChildren }) {
  const { me, signOut } = useSession();
  const admin = me?.user.role === "admin";
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <TopBar brand={me?.tenant.name ?? "Workspace"} navLabel="Main" email={me?.user.email} onSignOut={() => void signOut()}>
        <li><Link href="/deals">Deals</Link></li>
        <li><Link href="/accounts">Accounts</Link></li>
        <li><Link href="/contacts">Contacts</Link></li>
        <li><Link href="/pipeline">Pipeline</Link></li>
        {admin && <li><Link href="/team">Team</Link></li>}
        {admin && <li><Link href="/organization">Organization</Link></li>}
        {admin && <li><Link href="/security-log">Security log</Link></li>}
        <li><Link href="/settings">My account</Link></li>
      </TopBar>
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
