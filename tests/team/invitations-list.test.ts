import { afterAll, describe, expect, test } from "bun:test";
import { addMember, allAudit, clockedApp, login } from "../auth/support";
import { INVITATIONS, accept, invite, invited, PASSWORD } from "./support";

// One clock for the whole file: invitations get distinct created_at, and some are made to expire.
const { t, clock } = clockedApp();
afterAll(() => t.close());
let admin = await t.signup("listing");
let other = await t.signup("elsewhere");

const list = (query = "", token = admin.access_token) => t.json("GET", `${INVITATIONS}${query}`, { token });
const revoke = (id: string, token = admin.access_token) => t.json("POST", `${INVITATIONS}/${id}/revoke`, { token });

// Five invitations: expired (oldest), accepted, revoked, and two pending (newest).
const expired = await invited(t, admin, "old@example.com");
clock.advance(8 * 86_400_000);
// Tokens expire with time; sign in again after moving the clock.
admin = { ...admin, access_token: (await login(t, admin.email, admin.password)).body.access_token };
other = { ...other, access_token: (await login(t, other.email, other.password)).body.access_token };
clock.advance(1000);
const accepted = await invited(t, admin, "joined@example.com");
await accept(t, { token: accepted.token, password: PASSWORD });
clock.advance(1000);
const revoked = await invited(t, admin, "gone@example.com");
clock.advance(1000);
const pendingA = await invited(t, admin, "a@example.com");
clock.advance(1000);
const pendingB = await invited(t, admin, "b@example.com");
// Another tenant's invitation, which must never show here.
const foreign = await invited(t, other, "foreign@example.com");

describe("GET /users/invitations", () => {
  test("a page of the tenant's invitations, newest first", async () => {
    const r = await list();
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["items", "page", "pages", "size", "total"]);
    expect(r.body).toMatchObject({ total: 5, page: 1, size: 20, pages: 1 });
    expect(r.body.items.map((i: { email: string }) => i.email)).toEqual([
      "b@example.com",
      "a@example.com",
      "gone@example.com",
      "joined@example.com",
      "old@example.com",
    ]);
    expect(Object.keys(r.body.items[0]).sort()).toEqual(
      ["accepted_at", "created_at", "email", "expires_at", "id", "invited_by", "profile_id", "revoked_at", "role_id"].sort(),
    );
    expect(JSON.stringify(r.body)).not.toContain("foreign@example.com");
  });

  test("status filters pending, accepted, revoked, expired", async () => {
    expect((await revoke(revoked.invitation.id)).status).toBe(200);
    const emails = async (status: string) => (await list(`?status=${status}`)).body.items.map((i: { email: string }) => i.email);
    expect(await emails("pending")).toEqual(["b@example.com", "a@example.com"]);
    expect(await emails("accepted")).toEqual(["joined@example.com"]);
    expect(await emails("revoked")).toEqual(["gone@example.com"]);
    expect(await emails("expired")).toEqual(["old@example.com"]);
    expect((await list("?status=expired")).body.total).toBe(1);
  });

  test("paging: size and page, pages = ceil(total/size), past the end is empty", async () => {
    const p1 = await list("?size=2");
    expect(p1.body).toMatchObject({ total: 5, page: 1, size: 2, pages: 3 });
    expect(p1.body.items.map((i: { id: string }) => i.id)).toEqual([pendingB.invitation.id, pendingA.invitation.id]);
    const p3 = await list("?size=2&page=3");
    expect(p3.body.items.map((i: { id: string }) => i.id)).toEqual([expired.invitation.id]);
    const past = await list("?size=2&page=9");
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ items: [], total: 5, page: 9, pages: 3 });
    const none = await list("?status=pending&size=100", (await t.signup("emptyorg")).access_token);
    expect(none.body).toMatchObject({ items: [], total: 0, pages: 0 });
  });

  test("422 with loc [query, ...] for bad page, size and status, one item per field", async () => {
    const r = await list("?page=0&size=101&status=done");
    expect(r.status).toBe(422);
    expect(r.body.detail).toEqual([
      expect.objectContaining({ loc: ["query", "page"], type: "greater_than_equal", ctx: { ge: 1 } }),
      expect.objectContaining({ loc: ["query", "size"], type: "less_than_equal", ctx: { le: 100 } }),
      expect.objectContaining({ loc: ["query", "status"], type: "literal_error" }),
    ]);
    expect((await list("?size=0")).body.detail[0]).toMatchObject({ loc: ["query", "size"], type: "greater_than_equal" });
    expect((await list("?page=two")).body.detail[0]).toMatchObject({ loc: ["query", "page"], type: "int_parsing" });
  });

  test("members get 403 forbidden", async () => {
    const m = await addMember(t, admin.tenant.id, "plain@listing.test", "member password");
    const token = (await login(t, m.email, m.password, { "x-tenant": "listing" })).body.access_token;
    const r = await list("", token);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("forbidden");
    expect((await revoke(pendingA.invitation.id, token)).status).toBe(403);
  });
});

describe("POST /users/invitations/{id}/revoke", () => {
  test("200 with the Invitation; the link stops working; audited", async () => {
    const r = await revoke(pendingA.invitation.id);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: pendingA.invitation.id, email: "a@example.com", accepted_at: null });
    expect(r.body.revoked_at).not.toBeNull();
    expect((await accept(t, { token: pendingA.token, password: PASSWORD })).body.code).toBe("invitation_invalid");
    const rows = (await allAudit(t)).filter((a) => a.action === "invitation.revoked" && String(a.detail).includes(pendingA.invitation.id));
    expect(rows).toHaveLength(1);
  });

  test("revoking again answers the same revoked invitation (idempotent), with no second audit row", async () => {
    const r = await revoke(pendingA.invitation.id);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(pendingA.invitation.id);
    expect((await allAudit(t)).filter((a) => a.action === "invitation.revoked" && String(a.detail).includes(pendingA.invitation.id))).toHaveLength(1);
  });

  test("an accepted invitation cannot be revoked: 409", async () => {
    const r = await revoke(accepted.invitation.id);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("invitation_accepted");
  });

  test("unknown ids and other tenants' invitations are 404", async () => {
    expect((await revoke("nope")).status).toBe(404);
    const r = await revoke(foreign.invitation.id);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("not_found");
    // Untouched: it still works in its own tenant.
    expect((await t.ctx.repos.invitations.byId(other.tenant.id, foreign.invitation.id))!.revoked_at).toBeNull();
  });

  test("an admin of another tenant inviting the same address makes their own invitation", async () => {
    const r = await invite(t, other, { email: "b@example.com" });
    expect(r.status).toBe(201);
    expect(r.body.id).not.toBe(pendingB.invitation.id);
    // Tenant A's invitation is untouched: its link still joins tenant A.
    const a = await accept(t, { token: pendingB.token, password: PASSWORD });
    expect(a.status).toBe(201);
    expect(a.body.user.tenant_id).toBe(admin.tenant.id);
  });
});
