/**
 * Webhooks (admins, under Organization): send the organization's events to other systems as they
 * happen. Add (the signing secret shown once, with a Copy button), change, enable or disable,
 * rotate the secret, send a test, and read each webhook's delivery log with a Retry button.
 * Loaded as its own chunk (routes.tsx).
 */
import "./webhooks.css";
import { useState } from "preact/hooks";
import { api, type Webhook, type WebhookWithSecret } from "../api/client";
import { useStepUp } from "../account/reauth";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { Link } from "../shared/router";
import { Empty, ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { CopyField } from "../sign-in-providers/copy-field";
import { Deliveries } from "./deliveries";
import { WebhookForm } from "./webhook-form";

const REASONS: Record<string, string> = {
  gone: "The receiver answered 410 Gone.",
  failing: "No delivery succeeded for three days.",
};

const eventsLabel = (w: Webhook) => (w.events.includes("*") ? "All events" : w.events.length === 1 ? w.events[0]! : `${w.events.length} event types`);

export default function WebhooksScreen() {
  const list = useLoad(() => api.get("/api/v1/webhooks").then((l) => l.items), []);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<Webhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [rotating, setRotating] = useState<Webhook | null>(null);
  const [secret, setSecret] = useState<{ webhook: WebhookWithSecret; rotated: boolean } | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [logVersion, setLogVersion] = useState(0);
  const [busy, setBusy] = useState(false);
  const reauth = useStepUp("change the organization's webhooks");

  const act = async (what: () => Promise<unknown>, done: string) => {
    setBusy(true);
    try {
      await what();
      toast(done);
      list.reload();
      setLogVersion((n) => n + 1);
      return true;
    } catch (e) {
      toast(errorMessage(e), "error");
      return false;
    } finally {
      setBusy(false);
    }
  };

  const toggle = (w: Webhook) =>
    act(() => reauth.run(() => api.patch("/api/v1/webhooks/{id}", { path: { id: w.id }, body: { enabled: !w.enabled } })), w.enabled ? "Disabled the webhook: no events are sent to it." : "Enabled the webhook.");
  const sendTest = (w: Webhook) => {
    setShown(w.id);
    return act(() => api.post("/api/v1/webhooks/{id}/test", { path: { id: w.id } }), "Sent a test event: its answer shows in the delivery log below.");
  };
  const rotate = async () => {
    if (!rotating) return;
    setBusy(true);
    try {
      const id = rotating.id;
      const w = await reauth.run(() => api.post("/api/v1/webhooks/{id}/rotate-secret", { path: { id } }));
      setRotating(null);
      setSecret({ webhook: w, rotated: true });
      list.reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!deleting) return;
    const id = deleting.id;
    if (await act(() => reauth.run(() => api.delete("/api/v1/webhooks/{id}", { path: { id } })), "Deleted the webhook and its delivery log.")) {
      setDeleting(null);
      if (shown === id) setShown(null);
    }
  };

  const hooks = list.data;
  const open = hooks?.find((w) => w.id === shown) ?? null;
  return (
    <section aria-labelledby="webhooks-title" class="webhooks">
      <p class="crumbs">
        <Link href="/organization">Organization</Link> / Webhooks
      </p>
      <div class="screen-head">
        <h1 id="webhooks-title">Webhooks</h1>
        <button type="button" class="primary" onClick={() => setAdding(true)}>
          Add webhook
        </button>
      </div>
      <p class="muted">
        Send this organization’s changes to another system as they happen: each event is POSTed to the address you give, signed so the receiver can check it came
        from here (Standard Webhooks). Failed deliveries are retried for three days.
      </p>
      {list.error ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !hooks ? (
        <Loading label="Loading webhooks…" />
      ) : hooks.length === 0 ? (
        <Empty>
          <p>No webhooks yet. Add one to send events to another system.</p>
        </Empty>
      ) : (
        <ul class="webhook-list">
          {hooks.map((w) => (
            <li key={w.id} class={`panel webhook${shown === w.id ? " open" : ""}`}>
              <div class="webhook-head">
                <div class="webhook-what">
                  <strong class="mono url">{w.url}</strong>
                  {w.description && <span class="hint">{w.description}</span>}
                  <span class="hint">
                    {eventsLabel(w)}
                    {w.previous_secret_expires_at && " · the previous secret signs too until a day after the rotation"}
                  </span>
                </div>
                <div class="webhook-state">
                  {w.enabled ? <span class="tag ok">Enabled</span> : <span class="tag">Disabled</span>}
                  {!w.enabled && w.disabled_reason && <span class="hint">{REASONS[w.disabled_reason]} Check the receiver, then enable it again.</span>}
                </div>
              </div>
              <div class="row-actions">
                <button type="button" class="small" aria-expanded={shown === w.id} onClick={() => setShown(shown === w.id ? null : w.id)}>
                  {shown === w.id ? "Hide deliveries" : "Deliveries"}
                </button>
                <button type="button" class="small" disabled={busy || !w.enabled} onClick={() => void sendTest(w)}>
                  Send test
                </button>
                <button type="button" class="small" disabled={busy} onClick={() => void toggle(w)}>
                  {w.enabled ? "Disable" : "Enable"}
                </button>
                <button type="button" class="small" onClick={() => setEditing(w)}>
                  Edit
                </button>
                <button type="button" class="small" onClick={() => setRotating(w)}>
                  Rotate secret
                </button>
                <button type="button" class="small danger-text" onClick={() => setDeleting(w)}>
                  Delete
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {open && <Deliveries webhook={open} version={logVersion} />}
      <Modal open={adding} title="Add a webhook" onClose={() => setAdding(false)}>
        <WebhookForm
          guard={reauth.run}
          onCancel={() => setAdding(false)}
          onSaved={(w) => {
            setAdding(false);
            if ("secret" in w) setSecret({ webhook: w, rotated: false });
            list.reload();
          }}
        />
      </Modal>
      {editing && (
        <Modal open title="Edit the webhook" onClose={() => setEditing(null)}>
          <WebhookForm
            webhook={editing}
            guard={reauth.run}
            onCancel={() => setEditing(null)}
            onSaved={() => {
              setEditing(null);
              toast("Saved the webhook.");
              list.reload();
            }}
          />
        </Modal>
      )}
      {secret && (
        <Modal open title={secret.rotated ? "New signing secret" : "Webhook added: copy its signing secret"} onClose={() => setSecret(null)}>
          <p>
            Copy this secret now and keep it with your receiver: <strong>it is shown only this once.</strong> The receiver uses it to check the
            <code> webhook-signature </code> header of each request.
          </p>
          {secret.rotated && <p>The previous secret keeps signing beside this one for 24 hours, so you can update the receiver without missing an event.</p>}
          <CopyField label="Signing secret" value={secret.webhook.secret} />
          <div class="actions">
            <button type="button" class="primary" onClick={() => setSecret(null)}>
              I have copied it
            </button>
          </div>
        </Modal>
      )}
      <ConfirmDialog
        open={rotating !== null}
        title="Give this webhook a new signing secret?"
        confirmLabel="Rotate secret"
        busy={busy}
        onConfirm={() => void rotate()}
        onCancel={() => setRotating(null)}
      >
        <p>The new secret is shown once. For 24 hours requests carry a signature with the old secret too; after that only the new one works.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        danger
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(null)}
      >
        <p>No more events are sent to {deleting?.url}, and its delivery log is deleted. To pause it instead, disable it.</p>
      </ConfirmDialog>
      {reauth.dialog}
    </section>
  );
}
