/**
 * Signing in or signing up on the base domain, landing signed in on the workspace's host.
 *
 * When the session cookies carry a Domain shared by every subdomain (production), the base
 * domain's sign-in already signed the workspace host in: go there, and no handoff is ever taken
 * (a `#handoff=` in a link is ignored). On a development host (localhost) the server omits the
 * cookie Domain (browsers refuse one), so the base-domain call is made with credentials "omit" and
 * its refresh token rides to the workspace host in the URL fragment (never sent to a server),
 * where it is exchanged at once for this host's cookies, rotating it.
 *
 * Login CSRF (issue 29.5): a link `evil.<base>/welcome#handoff=<the attacker's token>` must not
 * sign a visitor into someone else's account. So the workspace host takes a handoff only if this
 * browser tab asked for it: the base page first sends the tab to `<workspace>/welcome?begin`, which
 * keeps a random nonce in the workspace origin's sessionStorage and sends the tab back to the base
 * domain with it; the base page (holding the new token in its own sessionStorage for those two
 * navigations) then hands the token over with that nonce. An attacker can start the dance in the
 * victim's tab but never learns the nonce, which only travels between the two pages of this tab.
 */
import { api, type TokenPair } from "../api/client";
import { config, workspaceOrigin } from "../shared/config";

/** Base origin, sessionStorage: the token waiting for its workspace's nonce. */
const PENDING = "suite-handoff-pending";
/** Workspace origin, sessionStorage: the nonce this tab's handoff must carry. */
const NONCE = "suite-handoff-nonce";
/** A handoff is two quick navigations: anything older is stale. */
const FRESH_MS = 2 * 60_000;

/** What base-domain sign-in calls pass as credentials. */
export const baseCredentials = (): RequestCredentials => (config().sharedCookies ? "same-origin" : "omit");

const safeNext = (next: string | null) => (next && next.startsWith("/") && !next.startsWith("//") ? next : "/");
const baseOrigin = () => `${location.protocol}//${config().baseDomain}${location.port ? `:${location.port}` : ""}`;

function read<T>(key: string): T | null {
  try {
    const raw = sessionStorage.getItem(key);
    sessionStorage.removeItem(key);
    const v = raw ? (JSON.parse(raw) as T & { at: number }) : null;
    return v && Date.now() - v.at < FRESH_MS ? v : null;
  } catch {
    return null;
  }
}

const randomNonce = () => Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, "0")).join("");

/** After signing in on the base domain: over to the workspace, signed in. */
export function goToWorkspace(subdomain: string, pair: TokenPair | null, next = "/"): void {
  const origin = workspaceOrigin(subdomain);
  if (config().sharedCookies || !pair) return location.assign(`${origin}${next}`);
  sessionStorage.setItem(PENDING, JSON.stringify({ subdomain, refresh: pair.refresh_token, next, at: Date.now() }));
  location.assign(`${origin}/welcome?begin=1&next=${encodeURIComponent(next)}`);
}

/**
 * On the base domain, `/welcome?to=<subdomain>&nonce=…`: the workspace host's answer. Hands this
 * tab's waiting token over with the nonce; without one (an old tab, someone else's link), home.
 * Answers true when it navigated away.
 */
export function continueHandoff(): boolean {
  if (location.pathname !== "/welcome") return false;
  const q = new URLSearchParams(location.search);
  const pending = read<{ subdomain: string; refresh: string; next: string }>(PENDING);
  const to = q.get("to");
  const nonce = q.get("nonce");
  if (!pending || !to || !nonce || pending.subdomain !== to) {
    history.replaceState(null, "", "/");
    return false;
  }
  const fragment = new URLSearchParams({ handoff: pending.refresh, nonce });
  location.replace(`${workspaceOrigin(to)}/welcome?next=${encodeURIComponent(safeNext(pending.next))}#${fragment}`);
  return true;
}

/**
 * On the workspace host: `/welcome?begin` keeps a nonce and asks the base page for the token
 * (answers true: navigating away); `/welcome#handoff=…&nonce=…` spends the token only when the
 * nonce is the one this tab kept. With shared cookies no handoff is taken at all.
 */
export async function finishHandoff(): Promise<boolean> {
  if (location.pathname !== "/welcome") return false;
  const q = new URLSearchParams(location.search);
  const next = safeNext(q.get("next"));
  if (q.get("begin") && !config().sharedCookies) {
    const nonce = randomNonce();
    sessionStorage.setItem(NONCE, JSON.stringify({ nonce, at: Date.now() }));
    const sub = location.hostname.slice(0, -(config().baseDomain.length + 1));
    location.replace(`${baseOrigin()}/welcome?to=${encodeURIComponent(sub)}&nonce=${nonce}`);
    return true;
  }
  const f = new URLSearchParams(location.hash.slice(1));
  const token = f.get("handoff");
  const kept = read<{ nonce: string }>(NONCE);
  history.replaceState(null, "", next);
  if (!token || config().sharedCookies || !kept || f.get("nonce") !== kept.nonce) return false;
  await api.post("/api/v1/auth/refresh", { body: { refresh_token: token } }).catch(() => {});
  return false;
}
