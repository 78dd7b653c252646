/** The kinds of sign-in provider, in the words an admin reads, and the domain-list text both ways. */
import type { ProviderKind } from "../api/client";

export const KINDS: { value: ProviderKind; label: string }[] = [
  { value: "google", label: "Google" },
  { value: "microsoft", label: "Microsoft (Entra ID)" },
  { value: "github", label: "GitHub" },
  { value: "oidc", label: "OpenID Connect (any issuer)" },
];

export const kindLabel = (k: string) => KINDS.find((x) => x.value === k)?.label ?? k;

/** The name a new provider gets until the admin types one (what the sign-in button says). */
export const defaultName = (k: ProviderKind) => (k === "oidc" ? "" : k === "microsoft" ? "Microsoft" : kindLabel(k));

/** "acme.com, acme.org  beta.acme.com" → ["acme.com", "acme.org", "beta.acme.com"] (a leading @ dropped). */
export function parseDomains(text: string): string[] {
  const out = text
    .split(/[\s,;]+/)
    .map((d) => d.trim().replace(/^@/, "").toLowerCase())
    .filter(Boolean);
  return [...new Set(out)];
}
