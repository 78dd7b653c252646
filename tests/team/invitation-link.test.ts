/**
 * Copy link (issue 34 item 5): POST /users/invitations/{id}/link re-issues a pending invitation's
 * link and answers it once to an admin; the earlier link stops working, no mail is queued, the
 * link is kept nowhere in clear, and an audit row says who took it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { hashToken } from "../../src/kernel/ids";
import { addMember, clockedApp, login } from "../auth/support";
import { testApp } from "../helpers";
import { testSql } from "../support/sql";
import { noteSecret } from "../security/ledger";
import { INVITATIONS, PASSWORD, accept, countRows, invited } from "./support";

const t = testApp();
const admin = await t.signup("copying");
const other = await t.signup("elsewhere");
afterAll(() => t.close());

const copy = (id: string, token = admin.access_token, tenant = admin.subdomain) => t.json("POST", `${INVITATIONS}/${id}/link`, { token, tenant });
/** The token a copied link carries; link and token are noted as secrets, so no log line may hold them. */
const tokenOf = (url: string) => {
  const token = decodeURIComponent(new URL(url).hash.match(/token=([^&]+)/)![1]!);
  noteSecret("copied link", url);
  noteSecret("copied token", token);
  return token;
};

describe("POST /users/invitations/{id}/link", () => {
  test("answers a fresh link once: the old one stops working, the new one accepts, nothing is mailed or kept in clear, one audit row", async () => {
    const first = await invited(t, admin, "copy@example.com");
    const outboxBefore = await countRows(t, "SELECT count(*) AS n FROM mail_outbox WHERE recipient = ?1", "copy@example.com");
    const r = await copy(first.invitation.id);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["expires_at", "url"]);
    expect(r.body.url).toStartWith("http://copying.localhost:8000/accept-invitation#token=");
    const token = tokenOf(r.body.url);
    expect(token).not.toBe(first.token);

    // Only the new token's hash is stored; no mail row, and the link appears in no table's text.
    const row = (await testSql(t.ctx).get<{ token_hash: string; expires_at: number }>("SELECT token_hash, expires_at FROM invitations WHERE id = ?1", first.invitation.id))!;
    expect(row.token_hash).toBe(hashToken(token));
    expect(new Date(Number(row.expires_at)).toISOString()).toBe(r.body.expires_at);
    expect(await countRows(t, "SELECT count(*) AS n FROM mail_outbox WHERE recipient = ?1", "copy@example.com")).toBe(outboxBefore);
    const audit = await testSql(t.ctx).all<{ action: string; user_id: string; detail: string }>(
      "SELECT action, user_id, detail FROM audit_log WHERE tenant_id = ?1 AND action = 'invitation.link_copied'",
      admin.tenant.id,
    );
    expect(audit.length).toBe(1);
    expect(audit[0]!.user_id).toBe(admin.user.id);
    expect(JSON.parse(audit[0]!.detail)).toMatchObject({ invitation_id: first.invitation.id, email: "copy@example.com" });
    expect(audit[0]!.detail).not.toContain(token);

    // Copying again re-issues again: the link copied before stops working too.
    const again = await copy(first.invitation.id);
    expect(again.status).toBe(200);
    const newest = tokenOf(again.body.url);
    for (const old of [first.token, token]) {
      const dead = await accept(t, { token: old, password: PASSWORD });
      expect(dead.status).toBe(400);
      expect(dead.body.code).toBe("invitation_invalid");
    }
    expect((await accept(t, { token: newest, password: PASSWORD })).status).toBe(201);

    // Accepted now: no more links.
    const late = await copy(first.invitation.id);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("invitation_not_pending");
  });

  test("a revoked invitation has no link; an unknown id or another organization's invitation is 404 and changes nothing", async () => {
    const revoked = await invited(t, admin, "gone@example.com");
    expect((await t.json("POST", `${INVITATIONS}/${revoked.invitation.id}/revoke`, { token: admin.access_token, tenant: admin.subdomain })).status).toBe(200);
    expect((await copy(revoked.invitation.id)).body.code).toBe("invitation_not_pending");

    const theirs = await invited(t, other, "theirs@example.com");
    const before = (await testSql(t.ctx).get<{ token_hash: string }>("SELECT token_hash FROM invitations WHERE id = ?1", theirs.invitation.id))!;
    for (const tenant of [admin.subdomain, other.subdomain]) {
      const r = await copy(theirs.invitation.id, admin.access_token, tenant);
      expect(r.status).toBeOneOf([403, 404]);
    }
    expect((await copy(theirs.invitation.id)).status).toBe(404);
    expect((await copy("no-such-invitation")).status).toBe(404);
    const after = (await testSql(t.ctx).get<{ token_hash: string }>("SELECT token_hash FROM invitations WHERE id = ?1", theirs.invitation.id))!;
    expect(after.token_hash).toBe(before.token_hash);
    expect((await accept(t, { token: theirs.token, password: PASSWORD })).status).toBe(201);
  });

  test("a member gets 403 forbidden and changes nothing", async () => {
    const inv = await invited(t, admin, "members-cannot@example.com");
    const member = await addMember(t, admin.tenant.id, "member@copying.test", "member's own password");
    const signedIn = await login(t, member.email, member.password);
    const r = await copy(inv.invitation.id, signedIn.body.access_token);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("forbidden");
    expect((await accept(t, { token: inv.token, password: PASSWORD })).status).toBe(201);
  });
});

test("an expired invitation has no link; an administrator profile's link needs step-up, a standard one does not", async () => {
  const timed = clockedApp({ env: { SUITE_ACCESS_TTL: "7200" } });
  try {
    const boss = await timed.t.signup("stepping");
    const adminProfile = (await testSql(timed.t.ctx).get<{ id: string }>("SELECT id FROM profiles WHERE tenant_id = ?1 AND is_admin = 1", boss.tenant.id))!.id;
    const plain = await invited(timed.t, boss, "plain@example.com");
    const high = await invited(timed.t, boss, "high@example.com", { profile_id: adminProfile });
    const link = (id: string) => timed.t.json("POST", `${INVITATIONS}/${id}/link`, { token: boss.access_token, tenant: boss.subdomain });

    timed.clock.advance(600_000 + 1000);
    expect((await link(plain.invitation.id)).status).toBe(200);
    const held = await link(high.invitation.id);
    expect(held.status).toBe(403);
    expect(held.body.code).toBe("reauthentication_required");
    // Nothing changed: the mailed link still works until a proof lets the copy through.
    expect((await testSql(timed.t.ctx).get<{ token_hash: string }>("SELECT token_hash FROM invitations WHERE id = ?1", high.invitation.id))!.token_hash).toBe(hashToken(high.token));
    expect((await timed.t.json("POST", "/api/v1/auth/reauthenticate", { token: boss.access_token, tenant: boss.subdomain, body: { password: boss.password } })).status).toBe(200);
    const ok = await link(high.invitation.id);
    expect(ok.status).toBe(200);
    expect(hashToken(tokenOf(ok.body.url))).not.toBe(hashToken(high.token));

    const late = await invited(timed.t, boss, "late@example.com");
    timed.clock.advance(7 * 86_400_000);
    const fresh = await login(timed.t, boss.email, boss.password);
    const r = await timed.t.json("POST", `${INVITATIONS}/${late.invitation.id}/link`, { token: fresh.body.access_token, tenant: boss.subdomain });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("invitation_not_pending");
  } finally {
    timed.t.close();
  }
});
