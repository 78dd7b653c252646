import type { Principal } from "../auth/service";
import { RequestValidationError, errors, AppError } from "../kernel/errors";
import { newId, toIso } from "../kernel/ids";
import { type Page, offsetOf, pageOf } from "../kernel/paging";
import type { ActivityJoined, NoteJoined } from "./activities-repo";
import type { ActivityRead, ActorRead, NoteRead, NoteWrite, RecordActivityRead } from "./model";
import type { RecordKind } from "./record-activity";
import type { CrmStore } from "./repo";

export interface ActivitiesDeps {
  now: () => number;
  repo: CrmStore;
}

const FORMER_MEMBER = "A former member";
const actorOf = (id: string | null, name: string | null): ActorRead | null => (id === null ? null : { id, name: name ?? FORMER_MEMBER });

const toNoteRead = (n: NoteJoined): NoteRead => ({
  id: n.id,
  deal_id: n.deal_id,
  body: n.body,
  author: actorOf(n.author_id, n.author_name)!,
  created_at: toIso(n.created_at),
  updated_at: toIso(n.updated_at),
});

function toActivityRead(dealId: string, a: ActivityJoined): ActivityRead {
  const actor = actorOf(a.actor_id, a.actor_name);
  const data: Record<string, unknown> =
    a.type === "note"
      ? {
          note: {
            id: a.id,
            deal_id: dealId,
            body: a.note_body ?? "",
            author: actor ?? { id: "", name: FORMER_MEMBER },
            created_at: toIso(a.created_at),
            updated_at: toIso(a.note_updated_at ?? a.created_at),
          } satisfies NoteRead,
        }
      : (JSON.parse(a.data) as Record<string, unknown>);
  return { id: a.id, type: a.type as ActivityRead["type"], created_at: toIso(a.created_at), actor, data };
}

/** Trimmed; blank is a 422 in FastAPI's shape (the schema already bounds the length and the characters). */
function bodyOf(body: NoteWrite): string {
  const text = body.body.trim();
  if (text === "") throw new RequestValidationError([{ loc: ["body", "body"], msg: "Value error, a note needs some text", type: "value_error", input: body.body }]);
  return text;
}

const notAuthor = () => new AppError(403, "not_note_author", "Only the note's author or an admin can change or delete this note.");

/** A deal's timeline and its notes (the deal writes add their own entries: deals-repo.ts); an account's and a contact's timelines. */
export function createActivitiesService(d: ActivitiesDeps) {
  const store = d.repo.activities;

  async function dealOr404(tenantId: string, dealId: string): Promise<void> {
    if (!(await d.repo.deals.byId(tenantId, dealId))) throw errors.notFound("Deal not found.");
  }

  async function timeline(auth: Principal, dealId: string, p: { page: number; size: number }): Promise<Page<ActivityRead>> {
    await dealOr404(auth.tenantId, dealId);
    const { rows, total } = await store.timeline(auth.tenantId, dealId, p.size, offsetOf(p.page, p.size));
    return pageOf(rows.map((a) => toActivityRead(dealId, a)), total, p.page, p.size);
  }

  async function noteOr404(tenantId: string, id: string): Promise<NoteJoined> {
    const n = await store.note(tenantId, id);
    if (!n) throw errors.notFound("Note not found.");
    return n;
  }

  /** The author, or an admin; anyone else learns 403 not_note_author. */
  async function ownNote(auth: Principal, id: string): Promise<NoteJoined> {
    const n = await noteOr404(auth.tenantId, id);
    if (n.author_id !== auth.userId && auth.role !== "admin") throw notAuthor();
    return n;
  }

  async function createNote(auth: Principal, dealId: string, body: NoteWrite): Promise<NoteRead> {
    const text = bodyOf(body);
    const id = newId();
    const now = d.now();
    const ok = await store.insertNote({ tenant_id: auth.tenantId, id, deal_id: dealId, author_id: auth.userId, body: text, created_at: now, updated_at: now });
    if (!ok) throw errors.notFound("Deal not found.");
    return getNote(auth, id);
  }

  const getNote = async (auth: Principal, id: string): Promise<NoteRead> => toNoteRead(await noteOr404(auth.tenantId, id));

  async function patchNote(auth: Principal, id: string, body: NoteWrite): Promise<NoteRead> {
    const text = bodyOf(body);
    const n = await ownNote(auth, id);
    const now = d.now();
    if (text !== n.body) await store.updateNote(auth.tenantId, id, text, now);
    return toNoteRead(text !== n.body ? { ...n, body: text, updated_at: now } : n);
  }

  async function deleteNote(auth: Principal, id: string): Promise<void> {
    await ownNote(auth, id);
    await store.removeNote(auth.tenantId, id);
  }

  /** An account's or a contact's timeline (404 when the organization has no such record). */
  async function recordTimeline(auth: Principal, kind: RecordKind, id: string, p: { page: number; size: number }): Promise<Page<RecordActivityRead>> {
    const exists = kind === "account" ? await d.repo.account(auth.tenantId, id) : await d.repo.contact(auth.tenantId, id);
    if (!exists) throw errors.notFound(kind === "account" ? "Account not found." : "Contact not found.");
    const { rows, total } = await d.repo.recordActivities.timeline(kind, auth.tenantId, id, p.size, offsetOf(p.page, p.size));
    const items = rows.map((a): RecordActivityRead => ({
      id: a.id,
      type: a.type as RecordActivityRead["type"],
      created_at: toIso(a.created_at),
      actor: actorOf(a.actor_id, a.actor_name),
      data: JSON.parse(a.data) as Record<string, unknown>,
    }));
    return pageOf(items, total, p.page, p.size);
  }

  return { timeline, recordTimeline, createNote, getNote, patchNote, deleteNote };
}

export type ActivitiesService = ReturnType<typeof createActivitiesService>;
