/**
 * Add or change a webhook: its address, a description, and which events it receives ("All
 * events", or types picked by group). The signing secret is never part of the form: the server
 * makes it and shows it once, after adding.
 */
import { useState } from "preact/hooks";
import { api, type Webhook, type WebhookWithSecret } from "../api/client";
import type { Guard } from "../account/reauth";
import { Field } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";
import { eventGroups, typeLabel } from "./event-types";

const FIELDS = ["url", "description", "events", "enabled"] as const;
const GROUPS = eventGroups();

export function WebhookForm({
  webhook,
  guard,
  onSaved,
  onCancel,
}: {
  /** The webhook to change; none to add one. */
  webhook?: Webhook;
  guard: Guard;
  /** A new webhook comes with its secret (shown once); a changed one without. */
  onSaved: (w: Webhook | WebhookWithSecret) => void;
  onCancel: () => void;
}) {
  const [url, setUrl] = useState(webhook?.url ?? "");
  const [description, setDescription] = useState(webhook?.description ?? "");
  const [all, setAll] = useState(webhook ? webhook.events.includes("*") : true);
  const [picked, setPicked] = useState<Set<string>>(new Set(webhook?.events.filter((e) => e !== "*") ?? []));
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const err = errors.fields;

  const toggle = (types: string[], on: boolean) => {
    const next = new Set(picked);
    for (const t of types) on ? next.add(t) : next.delete(t);
    setPicked(next);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!all && picked.size === 0) {
      setErrors({ fields: { events: "Pick at least one event, or choose All events." }, general: null });
      return;
    }
    setBusy(true);
    setErrors(NO_ERRORS);
    const body = { url: url.trim(), description: description.trim() || null, events: all ? ["*"] : [...picked], enabled };
    try {
      const saved = await guard(() =>
        webhook ? api.patch("/api/v1/webhooks/{id}", { path: { id: webhook.id }, body }) : api.post("/api/v1/webhooks", { body }),
      );
      onSaved(saved);
    } catch (x) {
      setErrors(formErrors(x, FIELDS));
      setBusy(false);
    }
  };

  return (
    <form class="webhook-form" onSubmit={submit} noValidate>
      <Field
        label="Address (URL)"
        type="url"
        value={url}
        onValue={setUrl}
        error={err.url}
        required
        autoFocus
        autocomplete="off"
        spellcheck={false}
        placeholder="https://example.com/webhooks/suite"
        hint="Each event is sent here as a signed POST request with a JSON body."
      />
      <Field label="Description (optional)" value={description} onValue={setDescription} error={err.description} maxLength={200} placeholder="Sync deals to the billing system" />
      <fieldset class="events-picker">
        <legend>Events to send</legend>
        <label>
          <input type="radio" name="which-events" checked={all} onChange={() => setAll(true)} />
          <span>All events, including types added later</span>
        </label>
        <label>
          <input type="radio" name="which-events" checked={!all} onChange={() => setAll(false)} />
          <span>Only the events I pick</span>
        </label>
        {!all && (
          <div class="event-groups">
            {GROUPS.map((g) => {
              const on = g.types.filter((t) => picked.has(t)).length;
              return (
                <fieldset key={g.label} class="event-group">
                  <legend>
                    <label>
                      <input
                        type="checkbox"
                        checked={on === g.types.length}
                        ref={(el) => void (el && (el.indeterminate = on > 0 && on < g.types.length))}
                        onChange={(ev) => toggle(g.types, (ev.target as HTMLInputElement).checked)}
                      />
                      <span>{g.label}</span>
                    </label>
                  </legend>
                  {g.types.map((t) => (
                    <label key={t} title={t}>
                      <input type="checkbox" checked={picked.has(t)} onChange={(ev) => toggle([t], (ev.target as HTMLInputElement).checked)} />
                      <span>{typeLabel(t)}</span>
                    </label>
                  ))}
                </fieldset>
              );
            })}
          </div>
        )}
        {err.events && <p class="error">{err.events}</p>}
      </fieldset>
      <label class="enabled-check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} />
        <span>Enabled: send events now</span>
      </label>
      <FormFooter error={errors.general} busy={busy} busyLabel={webhook ? "Saving…" : "Adding…"} label={webhook ? "Save webhook" : "Add webhook"} onCancel={onCancel} />
    </form>
  );
}
