import type { Principal, RequestInfo } from "../auth/service";
import { errors } from "../http/errors";
import type { AuditEntry, SecurityRepo } from "../security/repo";
import { type UserRead, toUserRead } from "./model";
import { type Page, containsPattern, offsetOf, pageOf } from "../http/paging";
import type { UserRow, UsersRepo } from "./repo";

/** Keeps copies of a user's name elsewhere (the CRM's deals) in step, inside the rename's transaction. */
export type RenamedInTx = (tenantId: string, userId: string, fullName: string | null, email: string) => void;

export interface UsersDeps {
  now: () => number;
  users: UsersRepo;
  security: SecurityRepo;
  renamedInTx: RenamedInTx;
}

/** The team: members of the caller's organization, and their names. */
export function createUsersService(d: UsersDeps) {
  async function list(p: Principal, q: { page: number; size: number; search: string | null }): Promise<Page<UserRead>> {
    const pattern = q.search === null ? null : containsPattern(q.search);
    const [rows, total] = await Promise.all([d.users.page(p.tenantId, pattern, q.size, offsetOf(q.page, q.size)), d.users.count(p.tenantId, pattern)]);
    return pageOf(rows.map(toUserRead), total, q.page, q.size);
  }

  /** A member renames themself; an admin renames anyone of their organization. */
  async function rename(p: Principal, id: string, fullName: string | null, req: RequestInfo): Promise<UserRead> {
    // A member learns nothing about other ids: refused before any lookup.
    if (id !== p.userId && p.role !== "admin") throw errors.forbidden();
    const name = fullName?.trim() || null;
    const now = d.now();
    const audit = (u: UserRow): AuditEntry => ({
      tenantId: p.tenantId,
      userId: p.userId,
      action: "user.renamed",
      ip: req.ip,
      userAgent: req.userAgent,
      detail: { user_id: u.id },
    });
    const user = await d.users.rename(p.tenantId, id, name, now, (u) => {
      d.renamedInTx(p.tenantId, u.id, u.full_name, u.email);
      d.security.auditInTx(audit(u), now);
    });
    if (!user) throw errors.notFound("No such user.");
    return toUserRead(user);
  }

  /** The organization's permission profiles, for the invite form (CONTRACT §3). */
  async function profiles(p: Principal): Promise<{ id: string; name: string; is_admin: boolean }[]> {
    return (await d.users.profiles(p.tenantId)).map((r) => ({ id: r.id, name: r.name, is_admin: r.is_admin === 1 }));
  }

  return { list, rename, profiles };
}

export type UsersService = ReturnType<typeof createUsersService>;
