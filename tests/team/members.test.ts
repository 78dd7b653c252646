import { afterAll, describe, expect, test } from "bun:test";
import { addMember, allAudit, login } from "../auth/support";
import { testApp } from "../helpers";
import { insertUser } from "../support/sql";
import { USERS } from "./support";

const t = testApp();
afterAll(() => t.close());
const admin = await t.signup("team", { full_name: "Ada Admin" });
const other = await t.signup("rivals");
// Six members after the admin, written straight to the database (hashing once keeps this quick).
const hash = await t.ctx.hasher.hash("member password");
const members: string[] = [];
for (let i = 0; i < 6; i++) {
  const id = `member-${i}`;
  await insertUser(t.ctx, {
    id,
    tenant_id: admin.tenant.id,
    email: `m${i}@team.test`,
    full_name: i === 3 ? "Grace 100%_Hopper" : `Member ${i}`,
    role: "member",
    profile_id: null,
    password_hash: hash,
    created_at: t.ctx.now() + 1000 * (i + 1),
  });
  members.push(id);
}
const memberToken = (await login(t, "m0@team.test", "member password", { "x-tenant": "team" })).body.access_token as string;

const list = (query = "", token = admin.access_token) => t.json("GET", `${USERS}${query}`, { token });
const patch = (id: string, body: unknown, token = admin.access_token) => t.json("PATCH", `${USERS}/${id}`, { token, body });

describe("GET /users", () => {
  test("the tenant's members as UserRead items, oldest first, never a hash", async () => {
    const r = await list();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 7, page: 1, size: 20, pages: 1 });
    expect(r.body.items.map((u: { id: string }) => u.id)).toEqual([admin.user.id, ...members]);
    expect(Object.keys(r.body.items[0]).sort()).toEqual(["created_at", "email", "email_verified", "email_verified_at", "email_verified_by", "full_name", "id", "profile_id", "role", "tenant_id"]);
    expect(r.body.items[0]).toMatchObject({ email: admin.email, role: "admin", full_name: "Ada Admin" });
    const text = JSON.stringify(r.body);
    expect(text).not.toContain("argon2");
    expect(text).not.toContain(other.email);
  });

  test("paging and its bounds", async () => {
    const p2 = await list("?page=2&size=3");
    expect(p2.body).toMatchObject({ total: 7, page: 2, size: 3, pages: 3 });
    expect(p2.body.items.map((u: { id: string }) => u.id)).toEqual(members.slice(2, 5));
    expect((await list("?page=5&size=3")).body.items).toEqual([]);
    const bad = await list("?page=-1&size=500");
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ["query", "page"],
      ["query", "size"],
    ]);
  });

  test("search: trimmed, case-insensitive, over email and name, wildcards taken literally", async () => {
    const emails = async (q: string) => (await list(`?search=${encodeURIComponent(q)}`)).body.items.map((u: { email: string }) => u.email);
    expect(await emails("  MEMBER 1 ")).toEqual(["m1@team.test"]);
    expect(await emails("m4@")).toEqual(["m4@team.test"]);
    expect(await emails("100%_h")).toEqual(["m3@team.test"]);
    expect(await emails("%")).toEqual(["m3@team.test"]);
    expect(await emails("_")).toEqual(["m3@team.test"]);
    expect((await list(`?search=${encodeURIComponent("admin@team")}`)).body.total).toBe(1);
    expect((await list(`?search=${"x".repeat(201)}`)).body.detail[0]).toMatchObject({ loc: ["query", "search"], type: "string_too_long" });
  });

  test("members get 403; no credentials 401", async () => {
    const r = await list("", memberToken);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("forbidden");
    expect((await t.json("GET", USERS)).status).toBe(401);
  });
});

describe("PATCH /users/{id}", () => {
  test("a member renames themself: 200 UserRead, trimmed", async () => {
    const r = await patch(members[0]!, { full_name: "  Margaret  " }, memberToken);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: members[0], full_name: "Margaret", email: "m0@team.test", role: "member" });
    expect((await t.ctx.repos.users.byId(admin.tenant.id, members[0]!))!.full_name).toBe("Margaret");
  });

  test("an admin renames anyone of the tenant; null or blank clears the name; audited", async () => {
    expect((await patch(members[1]!, { full_name: "Renamed" })).body.full_name).toBe("Renamed");
    expect((await patch(members[1]!, { full_name: "  " })).body.full_name).toBeNull();
    expect((await patch(members[1]!, { full_name: null })).body.full_name).toBeNull();
    expect((await allAudit(t)).filter((a) => a.action === "user.renamed" && String(a.detail).includes(members[1]!))).toHaveLength(3);
  });

  test("a member cannot rename another member (403); another tenant's or an unknown id is 404", async () => {
    const r = await patch(members[2]!, { full_name: "Hijack" }, memberToken);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("forbidden");
    expect((await patch(other.user.id, { full_name: "Hijack" })).status).toBe(404);
    expect((await patch("nobody", { full_name: "Hijack" })).body.code).toBe("not_found");
    expect((await t.ctx.repos.users.byId(other.tenant.id, other.user.id))!.full_name).toBeNull();
  });

  test("422 for a malformed body", async () => {
    const r = await patch(members[0]!, { full_name: 5 }, memberToken);
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["body", "full_name"]);
    expect((await patch(members[0]!, { full_name: "x".repeat(201) }, memberToken)).body.detail[0].type).toBe("string_too_long");
    // Every field is optional, but a PATCH must change something.
    expect((await patch(members[0]!, {}, memberToken)).body.detail[0]).toMatchObject({ loc: ["body"], type: "value_error" });
  });

  test("the CRM hears of the rename inside the same transaction, and a failure there undoes it", async () => {
    const crm = t.ctx.repos.crm as unknown as Record<string, unknown>;
    const original = crm.assigneeRenamedInTx;
    const calls: unknown[][] = [];
    try {
      crm.assigneeRenamedInTx = (...args: unknown[]) => {
        // SQLite calls it inside its open write transaction; PostgreSQL passes the transaction's handle first.
        const tx = typeof args[0] === "object" && args[0] !== null ? (args.shift() as { inTransaction?: boolean }) : null;
        calls.push([...args, tx ? tx.inTransaction === true : (t.ctx as { db?: { inTransaction: boolean } }).db!.inTransaction]);
      };
      await patch(members[4]!, { full_name: "Ada Lovelace" });
      expect(calls).toEqual([[admin.tenant.id, members[4], "Ada Lovelace", "m4@team.test", true]]);

      crm.assigneeRenamedInTx = () => {
        throw new Error("crm down");
      };
      expect((await patch(members[4]!, { full_name: "Not Saved" })).status).toBe(500);
      expect((await t.ctx.repos.users.byId(admin.tenant.id, members[4]!))!.full_name).toBe("Ada Lovelace");
    } finally {
      if (original === undefined) delete crm.assigneeRenamedInTx;
      else crm.assigneeRenamedInTx = original;
    }
  });
});

describe("the users module", () => {
  test("an organization without it gets 403 module_disabled on the team's admin routes; renaming oneself still works", async () => {
    const crmOnly = await t.signup("crmonly", { initial_modules: ["crm"] });
    const as = { token: crmOnly.access_token };
    for (const [method, path, body] of [
      ["POST", "/api/v1/users/invite", { email: "x@example.com" }],
      ["GET", "/api/v1/users/invitations", undefined],
      ["POST", "/api/v1/users/invitations/any/revoke", undefined],
      ["GET", USERS, undefined],
    ] as const) {
      const r = await t.json(method, path, { ...as, body });
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 403, code: "module_disabled" });
    }
    expect((await patch(crmOnly.user.id, { full_name: "Solo" }, crmOnly.access_token)).status).toBe(200);
  });
});
