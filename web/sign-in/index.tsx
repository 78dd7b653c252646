/**
 * Sign in: email and password, then the second factor when the answer is `requires_2fa`; or a
 * sign-in link by mail. On the base domain the workspace is found from the email (or asked for
 * when several have it) and the visitor lands signed in on its host (see handoff.ts).
 */
import { useEffect, useState } from "preact/hooks";
import { offerPasskeyNext } from "../account/passkey-offer";
import { ceremonyMessage, passkeysApi } from "../account/passkeys-api";
import { ApiError, api, scheduleRefresh, type LoginAnswer, type TokenPair } from "../api/client";
import { config, currentSubdomain, workspaceOrigin } from "../shared/config";
import { Field } from "../shared/field";
import { PublicFrame } from "../shared/layout";
import { Link, navigate } from "../shared/router";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";
import { baseCredentials, goToWorkspace } from "./handoff";
import { rememberLinkAsked } from "./link-asked";
import { ProviderButtons, forgetHandover, oauthMessage, takeHandover } from "./oauth";
import { SecondFactor } from "./second-factor";

/** A passkey sign-in's failure as a sentence. */
function passkeyLoginMessage(e: unknown): string {
  if (e instanceof ApiError && e.code === "invalid_passkey") return "That passkey could not be checked here. Try again, or sign in with your password.";
  return ceremonyMessage(e) ?? loginMessage(e);
}

export function loginMessage(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.code === "invalid_credentials") return "Wrong email or password.";
    if (e.code === "tenant_not_found") return "There is no workspace at this address. Check the address, or create a workspace.";
    if (e.code === "validation_error") return "Enter your email address and your password.";
  }
  return errorMessage(e);
}

/** After a sign-in answer with tokens: into the app (workspace host) or over to it (base domain). */
export async function signedIn(pair: TokenPair, reload: () => Promise<unknown>): Promise<void> {
  if (currentSubdomain()) {
    scheduleRefresh();
    await reload();
    const next = new URLSearchParams(location.search).get("next");
    navigate(next?.startsWith("/") && !next.startsWith("//") ? next : "/deals", true);
    return;
  }
  const me = await api.get("/api/v1/auth/me", { bearer: pair.access_token, noAuthRetry: true, credentials: "omit" });
  goToWorkspace(me.tenant.subdomain, pair, "/deals");
}

export default function SignIn() {
  const { reload } = useSession();
  const onWorkspace = currentSubdomain() !== null;
  const [email, setEmail] = useState(new URLSearchParams(location.search).get("email") ?? "");
  const [password, setPassword] = useState("");
  const [workspace, setWorkspace] = useState("");
  const [askWorkspace, setAskWorkspace] = useState(false);
  // Back from a provider: its error as a sentence, or the 2FA step with the handed-over token.
  const [back] = useState(() => {
    const h = takeHandover();
    if (!h.token) forgetHandover(); // an error is said once; only a 2FA token waits for its step
    return h;
  });
  const [challenge, setChallenge] = useState<string | null>(back.token);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(back.error ? oauthMessage(back.error) : "");
  const [notice, setNotice] = useState("");

  const credentials = onWorkspace ? "same-origin" : baseCredentials();
  // Passkeys need a relying party: any organization's host, or a base domain other than localhost.
  const passkeys = passkeysApi.supported() && (onWorkspace || config().baseDomain !== "localhost");
  const [round, setRound] = useState(0);

  // The browser's autofill offers this site's passkeys under the email field (conditional
  // mediation): a pick there signs in. It waits until this page is left or the button is used.
  useEffect(() => {
    if (!passkeys || challenge) return;
    let live = true;
    void passkeysApi.autofillSupported().then((ok) => {
      if (!ok || !live) return;
      passkeysApi
        .signIn(true, credentials)
        .then((pair) => signedIn(pair, reload))
        .catch((err) => {
          if (!live || ceremonyMessage(err)) return; // cancelled, or replaced by the button's request
          setError(passkeyLoginMessage(err));
          setRound((n) => n + 1);
        });
    });
    return () => {
      live = false;
      passkeysApi.cancel();
    };
  }, [challenge, round]);

  const withPasskey = async () => {
    setBusy(true);
    setError("");
    setNotice("");
    try {
      await signedIn(await passkeysApi.signIn(false, credentials), reload);
    } catch (err) {
      setError(passkeyLoginMessage(err));
      setRound((n) => n + 1);
    } finally {
      setBusy(false);
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (askWorkspace && workspace.trim()) {
      // Several workspaces know this email: sign in on the chosen one's own host.
      location.assign(`${workspaceOrigin(workspace.trim().toLowerCase())}/sign-in?email=${encodeURIComponent(email)}`);
      return;
    }
    setBusy(true);
    setError("");
    setNotice("");
    try {
      const answer: LoginAnswer = await api.post("/api/v1/auth/login", { body: { email, password }, credentials });
      if ("requires_2fa" in answer) setChallenge(answer.temp_token);
      else {
        if (onWorkspace) offerPasskeyNext();
        await signedIn(answer, reload);
      }
    } catch (err) {
      if (err instanceof ApiError && err.code === "tenant_required") {
        setAskWorkspace(true);
        setNotice("This email belongs to several workspaces. Which one do you want to sign in to?");
      } else setError(loginMessage(err));
    } finally {
      setBusy(false);
      setPassword("");
    }
  };

  const sendLink = async () => {
    setError("");
    setNotice("");
    if (!email.trim()) return setError("Enter your email address first, then ask for a link.");
    setBusy(true);
    try {
      rememberLinkAsked();
      setNotice((await api.post("/api/v1/auth/magic-link", { body: { email } })).detail);
    } catch (err) {
      setError(loginMessage(err));
    } finally {
      setBusy(false);
    }
  };

  if (challenge) {
    return (
      <PublicFrame title="Two-step verification">
        <SecondFactor
          tempToken={challenge}
          credentials={credentials}
          onDone={(pair) => (forgetHandover(), back.token === null && onWorkspace && offerPasskeyNext(), signedIn(pair, reload))}
          onRestart={(why) => (forgetHandover(), setChallenge(null), setError(why))}
        />
      </PublicFrame>
    );
  }

  return (
    <PublicFrame title={onWorkspace ? `Sign in to ${currentSubdomain()}` : "Sign in"}>
      {onWorkspace && <ProviderButtons />}
      <form onSubmit={submit} noValidate>
        <Field label="Email" type="email" autocomplete={passkeys ? "username webauthn" : "username"} required value={email} onValue={setEmail} />
        {askWorkspace ? (
          <Field label="Workspace (the name before the domain)" required value={workspace} onValue={setWorkspace} autocomplete="off" />
        ) : (
          <Field label="Password" type="password" autocomplete="current-password" required value={password} onValue={setPassword} />
        )}
        {error && <p class="error" role="alert">{error}</p>}
        {notice && <p class="notice" role="status">{notice}</p>}
        <button type="submit" class="primary wide" disabled={busy}>
          {askWorkspace ? "Go to this workspace" : busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {passkeys && !askWorkspace && (
        <button type="button" class="wide" style={{ marginTop: ".75rem" }} onClick={() => void withPasskey()} disabled={busy}>
          Sign in with a passkey
        </button>
      )}
      <p class="aside">
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
      {onWorkspace ? (
        <p class="aside">
          <button type="button" class="link" onClick={() => void sendLink()} disabled={busy}>
            Email me a sign-in link
          </button>
        </p>
      ) : (
        <p class="aside">
          New here? <Link href="/">Create a workspace</Link>
        </p>
      )}
    </PublicFrame>
  );
}
