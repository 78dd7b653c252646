/**
 * Sign-in through an outside provider (issue 17): the "Continue with …" links (a full page load to
 * the server's start URL, which redirects to the provider), the readable message for each error
 * code the callback sends back, and the 2FA hand-over (`?step=2fa#temp_token=…`).
 */
import { api, href, type PublicProvider } from "../api/client";
import { currentSubdomain } from "../shared/config";
import { useLoad } from "../shared/use-load";

const SIGN_IN_MESSAGES: Record<string, string> = {
  oauth_state_invalid: "That sign-in had expired or was started in another browser or tab. Start again from this page.",
  oauth_email_unverified: "The provider has not confirmed your email address, so it cannot be used here. Confirm the address with the provider, or sign in another way.",
  oauth_account_exists:
    "An account with this email address already exists. Sign in the usual way (password or sign-in link), then link this provider from My account, under Linked accounts.",
  oauth_domain_not_allowed: "Your email address’s domain may not join this organization through this provider. Ask an administrator for an invitation.",
  oauth_provider_error: "The provider could not sign you in (it refused, or did not answer properly). Try again in a moment, or sign in another way.",
  oauth_identity_other_org: "That account belongs to another organization. Sign in at that organization’s address, or use another account.",
  oauth_provider_unavailable: "This sign-in option is not available any more (it was removed or turned off). Sign in another way, or ask an administrator.",
  oauth_token_invalid: "The provider’s answer could not be verified, so you were not signed in. Try again, or sign in another way.",
  oauth_identity_in_use: "That account is already linked to another member of this organization. Sign in another way, or use another account.",
  oauth_not_registered: "No member of this organization has linked that account, and joining through it is closed. Sign in another way, or ask an administrator for an invitation.",
  oauth_account_unavailable: "The account that identity belonged to no longer exists. Ask an administrator for an invitation.",
  oauth_account_unverified: "Your account’s email address is not confirmed yet, so no provider can be linked to it. Confirm it, then try again.",
  oauth_rate_limited: "Too many sign-in attempts from your network. Wait a minute, then try again.",
  tenant_disabled: "This organization has been disabled by the operator of this server, so nobody can sign in to it for now. Ask them (or your administrator) about it.",
};

const LINK_MESSAGES: Record<string, string> = {
  ...SIGN_IN_MESSAGES,
  oauth_state_invalid: "That link attempt had expired or was started in another browser or tab. Try again.",
  oauth_identity_in_use: "That account is already linked to another member, so it cannot be linked to you. Use another account.",
  oauth_email_unverified: "The provider has not confirmed the account’s email address, so it cannot be linked. Confirm it with the provider, then try again.",
  oauth_account_unavailable: "Your account could not be found any more. Sign in again, then try linking again.",
  oauth_account_unverified: "Confirm your email address first (use the link we mailed you, or send a new one from the banner), then link the provider.",
  oauth_rate_limited: "Too many attempts from your network. Wait a minute, then try linking again.",
};

/** A sentence for an `?error=` code; an unknown code gets a general one (and the code, for support). */
export function oauthMessage(code: string, during: "sign-in" | "link" = "sign-in"): string {
  const known = (during === "link" ? LINK_MESSAGES : SIGN_IN_MESSAGES)[code];
  if (known) return known;
  const what = during === "link" ? "Linking that account" : "Signing in through that provider";
  const ref = /^[a-z][a-z0-9_]{0,60}$/.test(code) ? ` (reference: ${code})` : "";
  return `${what} did not work. Try again, or sign in another way${ref}.`;
}

let handover: { token: string | null; error: string | null } = { token: null, error: null };

/**
 * What the callback hands the sign-in page: the temp token (in the fragment, when the user has 2FA)
 * or an error code. Read once and wiped from the address bar at once, so history, a shared screen
 * or a reload never show the token again; `next` stays.
 */
export function takeHandover(): { token: string | null; error: string | null } {
  const q = new URLSearchParams(location.search);
  const token = new URLSearchParams(location.hash.slice(1)).get("temp_token");
  if (location.hash || q.has("step") || q.has("error")) {
    const next = q.get("next");
    history.replaceState(null, "", `${location.pathname}${next ? `?next=${encodeURIComponent(next)}` : ""}`);
  }
  if (token && q.get("step") === "2fa") handover = { token, error: null };
  else if (q.get("error")) handover = { token: null, error: q.get("error") };
  return handover;
}

/** The hand-over was spent (signed in), refused (start again) or its message read. */
export function forgetHandover(): void {
  handover = { token: null, error: null };
}

/** The organization's enabled providers as "Continue with …" links; nothing while none (or on the base domain). */
export function ProviderButtons() {
  const onWorkspace = currentSubdomain() !== null;
  const list = useLoad<PublicProvider[]>(() => (onWorkspace ? api.get("/api/v1/auth/providers/public").catch(() => []) : Promise.resolve([])), [onWorkspace]);
  const providers = list.data ?? [];
  if (!providers.length) return null;
  return (
    <>
      <ul class="oauth-buttons" aria-label="Sign in with another account">
        {providers.map((p) => (
          <li key={p.id}>
            <a class="button wide oauth" data-kind={p.kind} href={href("/api/v1/auth/oauth/{provider_id}/start", { path: { provider_id: p.id } })}>
              Continue with {p.name}
            </a>
          </li>
        ))}
      </ul>
      <p class="divider" aria-hidden="true">
        <span>or with your email</span>
      </p>
    </>
  );
}
