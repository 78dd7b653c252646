import type { Principal } from "../kernel/principal";
import { AppError, errors } from "../kernel/errors";
import { newId, toIso } from "../kernel/ids";
import type { CrmStore } from "./repo";
import type { SavedViewJoined } from "./views-repo";
import { MAX_VIEWS_PER_USER, type ViewCreate, type ViewPatch, type ViewQuery, type ViewRead } from "./views-model";

export interface ViewsDeps {
  now: () => number;
  repo: CrmStore;
}

const adminsOnly = () => new AppError(403, "shared_view_admin_only", "Only an admin can create, change or delete a shared view. Save it as a personal view instead.");
const tooMany = () => new AppError(409, "view_limit_reached", `You can keep at most ${MAX_VIEWS_PER_USER} views. Delete one you no longer use, then save again.`);

const toRead = (v: SavedViewJoined, defaultId: string | null): ViewRead => ({
  id: v.id,
  name: v.name,
  kind: v.kind as ViewRead["kind"],
  query: JSON.parse(v.query) as ViewQuery,
  columns: v.columns === null ? null : (JSON.parse(v.columns) as string[]),
  shared: v.shared === 1,
  owner: { id: v.owner_id, name: v.owner_name ?? "A former member" },
  is_default: v.id === defaultId,
  created_at: toIso(v.created_at),
  updated_at: toIso(v.updated_at),
});

/**
 * Saved views of the deal list. A personal view is its owner's alone (anyone else gets 404, as
 * for another organization's); a shared view is seen by every member and written by admins only.
 * Each member has at most one default view, theirs even when the view is shared.
 */
export function createViewsService(d: ViewsDeps) {
  const store = d.repo.views;

  async function visibleOr404(auth: Principal, id: string): Promise<SavedViewJoined> {
    const v = await store.byId(auth.tenantId, id);
    if (!v || (v.shared !== 1 && v.owner_id !== auth.userId)) throw errors.notFound("View not found.");
    return v;
  }

  async function list(auth: Principal): Promise<ViewRead[]> {
    const [rows, def] = await Promise.all([store.visible(auth.tenantId, auth.userId), store.defaultOf(auth.tenantId, auth.userId)]);
    return rows.map((v) => toRead(v, def));
  }

  async function get(auth: Principal, id: string): Promise<ViewRead> {
    const v = await visibleOr404(auth, id);
    return toRead(v, await store.defaultOf(auth.tenantId, auth.userId));
  }

  async function create(auth: Principal, body: ViewCreate): Promise<ViewRead> {
    if (body.shared && auth.role !== "admin") throw adminsOnly();
    const now = d.now();
    const id = newId();
    const ok = await store.insert(
      {
        tenant_id: auth.tenantId,
        id,
        owner_id: auth.userId,
        name: body.name.trim(),
        kind: body.kind,
        query: JSON.stringify(body.query),
        columns: body.columns ? JSON.stringify(body.columns) : null,
        shared: body.shared ? 1 : 0,
        created_at: now,
        updated_at: now,
      },
      MAX_VIEWS_PER_USER,
    );
    if (!ok) throw tooMany();
    return get(auth, id);
  }

  async function patch(auth: Principal, id: string, body: ViewPatch): Promise<ViewRead> {
    const v = await visibleOr404(auth, id);
    const { is_default, ...fields } = body;
    const changes = Object.keys(fields).length > 0;
    // A shared view, or making one shared: admins only. A personal view is visible to its owner alone.
    if (changes && (v.shared === 1 || fields.shared === true) && auth.role !== "admin") throw adminsOnly();
    if (changes) {
      await store.update(auth.tenantId, id, {
        name: fields.name?.trim() ?? v.name,
        kind: fields.kind ?? v.kind,
        query: fields.query ? JSON.stringify(fields.query) : v.query,
        columns: fields.columns === undefined ? v.columns : fields.columns === null ? null : JSON.stringify(fields.columns),
        shared: fields.shared === undefined ? v.shared : fields.shared ? 1 : 0,
        updated_at: d.now(),
      });
    }
    if (is_default === true) await store.setDefault(auth.tenantId, auth.userId, id);
    else if (is_default === false && (await store.defaultOf(auth.tenantId, auth.userId)) === id) await store.setDefault(auth.tenantId, auth.userId, null);
    return get(auth, id);
  }

  async function remove(auth: Principal, id: string): Promise<void> {
    const v = await visibleOr404(auth, id);
    if (v.shared === 1 && auth.role !== "admin") throw adminsOnly();
    await store.remove(auth.tenantId, id);
  }

  return { list, get, create, patch, remove };
}

export type ViewsService = ReturnType<typeof createViewsService>;
