/**
 * Every call the web app makes about passkeys, in one place: the server's /auth/passkeys
 * operations through the app's API client, and the browser's WebAuthn ceremonies around them
 * (@simplewebauthn/browser turns the JSON options into navigator.credentials calls and back).
 */
import {
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  WebAuthnAbortService,
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  startAuthentication,
  startRegistration,
} from "@simplewebauthn/browser";
import { type TokenPair, request } from "../api/client";

export interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  backed_up: boolean;
  transports: string[];
}

const P = "/auth/passkeys";
const post = <R>(path: string, body?: unknown, credentials?: RequestCredentials) => request<R>("POST", path, { body, credentials, noAuthRetry: path.startsWith(`${P}/login`) });

export const passkeysApi = {
  supported: () => browserSupportsWebAuthn(),
  autofillSupported: () => browserSupportsWebAuthnAutofill(),
  list: () => request<Passkey[]>("GET", P),
  rename: (id: string, name: string) => request<Passkey>("PATCH", `${P}/${encodeURIComponent(id)}`, { body: { name } }),
  remove: (id: string) => request<void>("DELETE", `${P}/${encodeURIComponent(id)}`),

  /** Creates a passkey on this device and registers it (needs a recent sign-in: the caller's guard asks). */
  async add(name?: string): Promise<Passkey> {
    const optionsJSON = await post<PublicKeyCredentialCreationOptionsJSON>(`${P}/register/options`);
    const response = await startRegistration({ optionsJSON });
    return post<Passkey>(`${P}/register/verify`, { response, ...(name ? { name } : {}) });
  },

  /**
   * Signs in with a passkey: the browser's chooser (a button), or its autofill under the email
   * field (`autofill`: resolves only when the user picks a passkey there).
   */
  async signIn(autofill: boolean, credentials?: RequestCredentials): Promise<TokenPair> {
    const optionsJSON = await post<PublicKeyCredentialRequestOptionsJSON>(`${P}/login/options`, undefined, credentials);
    const response = await startAuthentication({ optionsJSON, useBrowserAutofill: autofill });
    return post<TokenPair>(`${P}/login/verify`, { response }, credentials);
  },

  /** Renews this session's proof with a passkey instead of the password. */
  async reauthenticate(): Promise<void> {
    const optionsJSON = await post<PublicKeyCredentialRequestOptionsJSON>(`${P}/login/options`);
    const response = await startAuthentication({ optionsJSON });
    await post<unknown>("/auth/reauthenticate", { passkey: response });
  },

  /** Ends a waiting autofill request (leaving the sign-in page, or starting the button's). */
  cancel: () => WebAuthnAbortService.cancelCeremony(),
};

/** A browser's refusal or cancel (NotAllowedError, AbortError) as a plain sentence, or null for other errors. */
export function ceremonyMessage(e: unknown): string | null {
  const name = (e as { name?: string } | null)?.name;
  if (name === "NotAllowedError" || name === "AbortError") return "The passkey request was cancelled or timed out.";
  if (name === "InvalidStateError") return "This device already holds a passkey for your account.";
  if (name === "SecurityError" || name === "NotSupportedError") return "Passkeys are not available on this page or in this browser.";
  return null;
}
