import type { Principal } from "../auth/service";
import { type ProfileList, type UserRead, toUserRead } from "./model";
import { type Page, containsPattern, offsetOf, pageOf } from "../kernel/paging";
import type { UsersStore } from "./repo";



export interface UsersDeps {
  users: UsersStore;
}

/** The team: members of the caller's organization, and its profiles (changes: members-service.ts). */
export function createUsersService(d: UsersDeps) {
  async function list(p: Principal, q: { page: number; size: number; search: string | null }): Promise<Page<UserRead>> {
    const pattern = q.search === null ? null : containsPattern(q.search);
    const [rows, total] = await Promise.all([d.users.page(p.tenantId, pattern, q.size, offsetOf(q.page, q.size)), d.users.count(p.tenantId, pattern)]);
    return pageOf(rows.map(toUserRead), total, q.page, q.size);
  }

  /** The organization's permission profiles, for the invite form (docs/interface.md#users-roles-and-profiles). */
  async function profiles(p: Principal): Promise<ProfileList> {
    return (await d.users.profiles(p.tenantId)).map((r): ProfileList[number] => ({ id: r.id, name: r.name, is_admin: r.is_admin === 1 }));
  }

  return { list, profiles };
}

export type UsersService = ReturnType<typeof createUsersService>;
