/** The base domain's page: create a workspace (signup, unless the server closed it), or go to yours by its subdomain. */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { config, workspaceOrigin } from "../shared/config";
import { Field } from "../shared/field";
import { Link } from "../shared/router";
import { errorMessage } from "../shared/states";
import { baseCredentials, goToWorkspace } from "../sign-in/handoff";

const SUBDOMAIN = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;

export default function PublicHome() {
  const [form, setForm] = useState({ tenant_name: "", subdomain: "", full_name: "", email: "", password: "" });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [find, setFind] = useState("");
  const [findError, setFindError] = useState("");
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  const base = config().baseDomain;

  const signup = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    setErrors({});
    try {
      const answer = await api.post("/api/v1/auth/signup", { body: { ...form, full_name: form.full_name.trim() || null }, credentials: baseCredentials() });
      goToWorkspace(answer.tenant.subdomain, answer, "/deals");
    } catch (err) {
      if (err instanceof ApiError && err.items.length) {
        const byField: Record<string, string> = {};
        for (const i of err.items) byField[String(i.loc[1] ?? "")] ??= i.msg;
        setErrors(byField);
        setError("Some fields above need a change: each one says what.");
      } else if (err instanceof ApiError && err.code === "subdomain_taken") setErrors({ subdomain: "This address is taken: choose another." });
      else setError(errorMessage(err));
      setBusy(false);
    }
  };

  const go = (e: Event) => {
    e.preventDefault();
    const sub = find.trim().toLowerCase();
    if (!SUBDOMAIN.test(sub)) return setFindError("Enter your workspace's name as it appears in its address, e.g. acme.");
    location.assign(`${workspaceOrigin(sub)}/sign-in`);
  };

  return (
    <div class="public home">
      <main id="main">
        <header class="hero">
          <h1>Workspace Suite</h1>
          <p>Sign-in, your team and a CRM for your company, on your own server.</p>
        </header>
        <div class="columns">
          {config().signup === "closed" ? (
            <section class="card" aria-labelledby="closed-title">
              <h2 id="closed-title">Getting a workspace</h2>
              <p>New workspaces cannot be created from this page: signup is closed on this server.</p>
              <p>
                To get one, ask the person who runs this server; they create workspaces with <code>suite tenant create</code>. If you were invited to a
                workspace, open the link in your invitation email.
              </p>
            </section>
          ) : (
            <section class="card" aria-labelledby="signup-title">
              <h2 id="signup-title">Create a workspace</h2>
              <form onSubmit={signup} noValidate>
                <Field label="Organization name" required value={form.tenant_name} onValue={set("tenant_name")} error={errors.tenant_name} autocomplete="organization" />
                <Field label="Workspace address" required value={form.subdomain} onValue={(v) => set("subdomain")(v.toLowerCase())} error={errors.subdomain} hint={`${form.subdomain || "acme"}.${base}`} autocomplete="off" />
                <Field label="Your name" value={form.full_name} onValue={set("full_name")} error={errors.full_name} autocomplete="name" />
                <Field label="Work email" type="email" required value={form.email} onValue={set("email")} error={errors.email} autocomplete="email" />
                <Field label="Password" type="password" required minLength={8} hint="8 to 128 characters, not a common one." value={form.password} onValue={set("password")} error={errors.password} autocomplete="new-password" />
                {error && <p class="error" role="alert">{error}</p>}
                <button type="submit" class="primary wide" disabled={busy}>
                  {busy ? "Creating…" : "Create workspace"}
                </button>
              </form>
            </section>
          )}
          <section class="card" aria-labelledby="find-title">
            <h2 id="find-title">Go to your workspace</h2>
            <form onSubmit={go} noValidate>
              <Field label="Workspace" value={find} onValue={setFind} error={findError || undefined} hint={`${find || "acme"}.${base}`} autocomplete="off" />
              <button type="submit" class="wide">Continue</button>
            </form>
            <p class="aside">
              Or <Link href="/sign-in">sign in with your email</Link>.
            </p>
          </section>
        </div>
      </main>
    </div>
  );
}
