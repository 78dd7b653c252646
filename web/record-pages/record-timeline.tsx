/**
 * An account's or a contact's timeline, newest first: its creation, each change (who, when,
 * before → after) and each import that added or changed it, in the deal page's look
 * (web/deal-page/deal-page.css).
 */
import { api, type RecordActivity as Entry } from "../api/client";
import { formatDateTime } from "../shared/format";
import { ErrorBox, Loading } from "../shared/states";
import { usePagedTimeline } from "../shared/use-paged-timeline";

type Change = { field: string; before: string | null; after: string | null; before_id?: string | null; after_id?: string | null };

const PAGE = 50;
const LABELS: Record<string, string> = {
  name: "Name", domain: "Web domain", industry: "Industry", first_name: "First name", last_name: "Last name", email: "Email", phone: "Phone", account: "Account",
};
const shown = (v: unknown) => (v === null || v === undefined || v === "" ? "none" : String(v));

function ChangeList({ changes }: { changes: Change[] }) {
  return (
    <ul class="changes">
      {changes.map((c) => (
        <li key={c.field}>
          <span class="field-name">{LABELS[c.field] ?? c.field}</span>
          {/* An import names a contact's account by its ids only. */}
          {c.before === null && c.after === null && (c.before_id ?? null) !== (c.after_id ?? null) ? (
            " changed"
          ) : (
            <>
              : <span class="before">{shown(c.before)}</span> → <span class="after">{shown(c.after)}</span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
const NOUN = { account: "account", contact: "contact" } as const;

function EntryText({ e, kind }: { e: Entry; kind: "account" | "contact" }) {
  const who = e.actor?.name ?? "Someone";
  const d = e.data as Record<string, any>;
  if (e.type === "created") {
    return (
      <p>
        <strong>{who}</strong> created the {NOUN[kind]}
        {kind === "contact" && d.account ? ` at ${d.account}` : ""}.
      </p>
    );
  }
  const changes: Change[] = d.changes ?? [];
  if (e.type === "imported") {
    return (
      <>
        <p>
          <strong>{who}</strong> {d.action === "added" ? "added it with an import." : "changed it with an import:"}
        </p>
        {changes.length ? <ChangeList changes={changes} /> : null}
      </>
    );
  }
  return (
    <>
      <p>
        <strong>{who}</strong> changed:
      </p>
      <ChangeList changes={changes} />
    </>
  );
}

export function RecordTimeline({ kind, id, version }: { kind: "account" | "contact"; id: string; version: number }) {
  const { items, total, error, reload, more } = usePagedTimeline<Entry>((page, signal) => {
    const options = { path: { id }, query: { page, size: PAGE }, signal };
    return kind === "account" ? api.get("/api/v1/crm/accounts/{id}/activities", options) : api.get("/api/v1/crm/contacts/{id}/activities", options);
  }, [kind, id, version]);

  return (
    <section class="timeline" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      {error ? <ErrorBox error={error} retry={reload} /> : null}
      {!items ? (
        error ? null : <Loading label="Loading the timeline…" />
      ) : (
        <ol class="entries">
          {items.map((e) => (
            <li key={e.id} class={`entry ${e.type}`}>
              <time dateTime={e.created_at}>{formatDateTime(e.created_at)}</time>
              <EntryText e={e} kind={kind} />
            </li>
          ))}
        </ol>
      )}
      {items && items.length < total ? (
        <button type="button" onClick={more}>
          Show older entries
        </button>
      ) : null}
    </section>
  );
}
