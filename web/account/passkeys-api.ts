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
import { type TokenPair, api } from "../api/client";
import type { Answer } from "../api/operations";

export type Passkey = Answer<"get", "/api/v1/auth/passkeys">[number];

/** The server's options are the WebAuthn JSON forms the browser library reads (typed loosely in the document). */
const creation = (o: unknown) => o as PublicKeyCredentialCreationOptionsJSON;
const request = (o: unknown) => o as PublicKeyCredentialRequestOptionsJSON;
/** The browser library's extension outputs are an interface; the document's are any JSON object. */
const plain = <T extends { clientExtensionResults: object }>(r: T) => ({ ...r, clientExtensionResults: r.clientExtensionResults as Record<string, unknown> });

export const passkeysApi = {
  supported: () => browserSupportsWebAuthn(),
  autofillSupported: () => browserSupportsWebAuthnAutofill(),
  list: () => api.get("/api/v1/auth/passkeys"),
  rename: (id: string, name: string) => api.patch("/api/v1/auth/passkeys/{id}", { path: { id }, body: { name } }),
  remove: (id: string) => api.delete("/api/v1/auth/passkeys/{id}", { path: { id } }),

  /** Creates a passkey on this device and registers it (needs a recent sign-in: the caller's guard asks). */
  async add(name?: string): Promise<Passkey> {
    const optionsJSON = creation(await api.post("/api/v1/auth/passkeys/register/options"));
    const response = await startRegistration({ optionsJSON });
    return api.post("/api/v1/auth/passkeys/register/verify", { body: { response: plain(response), ...(name ? { name } : {}) } });
  },

  /**
   * Signs in with a passkey: the browser's chooser (a button), or its autofill under the email
   * field (`autofill`: resolves only when the user picks a passkey there). Signed out: a 401 is
   * this action's answer, never a reason to refresh.
   */
  async signIn(autofill: boolean, credentials?: RequestCredentials): Promise<TokenPair> {
    const optionsJSON = request(await api.post("/api/v1/auth/passkeys/login/options", { credentials, noAuthRetry: true }));
    const response = await startAuthentication({ optionsJSON, useBrowserAutofill: autofill });
    return api.post("/api/v1/auth/passkeys/login/verify", { body: { response: plain(response) }, credentials, noAuthRetry: true });
  },

  /** Renews this session's proof with a passkey instead of the password. */
  async reauthenticate(): Promise<void> {
    const optionsJSON = request(await api.post("/api/v1/auth/passkeys/login/options"));
    const response = await startAuthentication({ optionsJSON });
    await api.post("/api/v1/auth/reauthenticate", { body: { passkey: plain(response) } });
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
