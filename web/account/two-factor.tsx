/** Two-step verification: set up (QR code + secret), confirm, backup codes, regenerate, turn off. */
import { useState } from "preact/hooks";
import { ApiError, api, type TwoFactorSetup } from "../api/client";
import { Field } from "../shared/field";
import { ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { useSession } from "../shared/session";
import { QrCode } from "./qr";
import { useReauth } from "./reauth";

export function BackupCodes({ codes }: { codes: string[] }) {
  const text = `${codes.join("\n")}\n`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      toast("Backup codes copied.");
    } catch {
      toast("Copying is not allowed here: select the codes and copy them by hand.", "error");
    }
  };
  return (
    <div>
      <p>Keep these backup codes somewhere safe. Each one signs you in once if you lose your phone. They are shown only now.</p>
      <ul class="codes" aria-label="Backup codes">
        {codes.map((c) => (
          <li key={c} style={{ listStyle: "none" }}>{c}</li>
        ))}
      </ul>
      <div class="row" style={{ marginTop: ".5rem" }}>
        <button type="button" onClick={() => void copy()}>Copy codes</button>
        <a class="button" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`} download="workspace-backup-codes.txt">
          Download codes
        </a>
      </div>
    </div>
  );
}

export function TwoFactor() {
  // 2FA may be what the organization's sign-in policy asked for: the session is re-read (its policy_setup).
  const { reload } = useSession();
  const status = useLoad(() => api.get("/api/v1/auth/2fa/status"), []);
  const enabled = status.data?.enabled ?? false;
  const reauth = useReauth(enabled);
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const [fresh, setFresh] = useState<string[] | null>(null);
  const [code, setCode] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const act = async (f: () => Promise<void>) => {
    setBusy(true);
    setError("");
    try {
      await f();
    } catch (e) {
      setError(e instanceof ApiError && e.code === "invalid_2fa_code" ? "That code is not valid. Check your authenticator app and try again." : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const start = () => act(async () => {
    setSetup(await reauth.run(() => api.post("/api/v1/auth/2fa/setup")));
    setFresh(null);
  });
  const confirm = (e: Event) => (e.preventDefault(), act(async () => {
    await reauth.run(() => api.post("/api/v1/auth/2fa/confirm", { body: { code: code.trim() } }));
    setFresh(setup?.backup_codes ?? null);
    setSetup(null);
    setCode("");
    toast("Two-step verification is on.");
    status.reload();
    void reload();
  }));
  const regenerate = () => act(async () => {
    setFresh((await reauth.run(() => api.post("/api/v1/auth/2fa/backup-codes"))).backup_codes);
    toast("New backup codes made: the old ones no longer work.");
    status.reload();
  });
  const disable = (e: Event) => (e.preventDefault(), act(async () => {
    await api.post("/api/v1/auth/2fa/disable", { body: { password, code: code.trim() } });
    setPassword("");
    setCode("");
    setFresh(null);
    toast("Two-step verification is off.");
    status.reload();
  }));

  let body;
  if (status.error) body = <ErrorBox error={status.error} retry={status.reload} />;
  else if (!status.data) body = <Loading />;
  else if (setup) {
    body = (
      <div>
        <ol>
          <li>Scan this code with your authenticator app (or type the key below).</li>
          <li>Enter the 6-digit code the app shows.</li>
        </ol>
        <QrCode text={setup.otpauth_url} label="QR code for your authenticator app" />
        <p>
          Key: <code class="secret">{setup.secret}</code>
        </p>
        <form onSubmit={confirm} noValidate class="toolbar">
          <Field label="6-digit code" inputMode="numeric" autocomplete="one-time-code" required value={code} onValue={setCode} />
          <button type="submit" class="primary" disabled={busy || !code.trim()}>Turn on</button>
          <button type="button" onClick={() => setSetup(null)}>Cancel</button>
        </form>
        <BackupCodes codes={setup.backup_codes} />
      </div>
    );
  } else if (!enabled) {
    body = (
      <div>
        <p><span class="tag">Off</span> Add a second step to your sign-in: a code from an authenticator app on your phone.</p>
        <button type="button" class="primary" disabled={busy} onClick={() => void start()}>Set up two-step verification</button>
      </div>
    );
  } else {
    body = (
      <div>
        <p>
          <span class="tag ok">On</span> Backup codes left: <strong>{status.data.backup_codes_remaining}</strong>
        </p>
        {fresh && <BackupCodes codes={fresh} />}
        <div class="row">
          <button type="button" disabled={busy} onClick={() => void regenerate()}>Make new backup codes</button>
        </div>
        <h3>Turn off two-step verification</h3>
        <form onSubmit={disable} noValidate class="toolbar">
          <Field label="Password" type="password" autocomplete="current-password" required value={password} onValue={setPassword} />
          <Field label="Authenticator or backup code" autocomplete="one-time-code" required value={code} onValue={setCode} />
          <button type="submit" class="danger" disabled={busy || !password || !code.trim()}>Turn off</button>
        </form>
      </div>
    );
  }
  return (
    <section class="panel" aria-labelledby="twofa-title">
      <h2 id="twofa-title">Two-step verification</h2>
      {body}
      {error && <p class="error" role="alert">{error}</p>}
      {reauth.dialog}
    </section>
  );
}
