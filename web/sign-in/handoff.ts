/**
 * Signing in or signing up on the base domain, landing signed in on the workspace's host.
 *
 * When the session cookies carry a Domain shared by every subdomain (production), the base
 * domain's sign-in already signed the workspace host in: go there. On a development host
 * (localhost), the server omits the cookie Domain (browsers refuse one), so the base-domain call
 * is made with credentials "omit" (no cookie left behind on the base host) and its refresh token
 * rides to the workspace host in the URL fragment (never sent to a server), where it is
 * exchanged at once for this host's cookies, rotating it, and wiped from the address bar.
 */
import { api, type TokenPair } from "../api/client";
import { config, workspaceOrigin } from "../shared/config";

/** What base-domain sign-in calls pass as credentials. */
export const baseCredentials = (): RequestCredentials => (config().sharedCookies ? "same-origin" : "omit");

export function goToWorkspace(subdomain: string, pair: TokenPair | null, next = "/"): void {
  const origin = workspaceOrigin(subdomain);
  if (config().sharedCookies || !pair) return location.assign(`${origin}${next}`);
  location.assign(`${origin}/welcome?next=${encodeURIComponent(next)}#handoff=${encodeURIComponent(pair.refresh_token)}`);
}

/** On the workspace host: spends a handoff in the fragment, if any. */
export async function finishHandoff(): Promise<void> {
  if (location.pathname !== "/welcome") return;
  const token = new URLSearchParams(location.hash.slice(1)).get("handoff");
  const next = new URLSearchParams(location.search).get("next") ?? "/";
  history.replaceState(null, "", next.startsWith("/") && !next.startsWith("//") ? next : "/");
  if (token) await api.auth.handoff(token).catch(() => {});
}
