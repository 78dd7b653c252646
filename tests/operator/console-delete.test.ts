import { describe, expect, test } from "bun:test";
import { OPERATOR_PASSWORD, operatorAppPerTest } from "./operator-kit";

/**
 * Issue 34, items 4 and 6: deleting an organization from the operator console (step-up, the
 * subdomain typed again, background batches, the export handed over once) and the deletion's
 * server audit entries in the console's audit table, from the console and the command line alike.
 */

const setup = operatorAppPerTest();

/** The tar's entries: name and content (ustar: 512-byte header, name at 0, octal size at 124). */
function untar(bytes: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  const text = (a: number, b: number) => new TextDecoder().decode(bytes.subarray(a, b)).replace(/\0.*$/s, "");
  for (let at = 0; at + 512 <= bytes.length; ) {
    const name = text(at, at + 100);
    if (!name) break;
    const size = Number.parseInt(text(at + 124, at + 136).trim(), 8);
    out.set(name, new TextDecoder().decode(bytes.subarray(at + 512, at + 512 + size)));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

type AuditRow = { action: string; operator: string | null; target: string | null; user_agent: string | null; detail: Record<string, unknown> };

describe("deleting an organization from the console", () => {
  test("step-up, the subdomain typed again, 202 and background batches, the export once, both audit entries", async () => {
    const { app, clock, signIn } = await setup();
    const acme = await app.signup("acme", { tenant_name: "Acme Rockets" });
    await app.signup("globex");
    const account = await app.json("POST", "/api/v1/crm/accounts", { token: acme.access_token, tenant: "acme", body: { name: "Coyote" } });
    expect((await app.json("POST", "/api/v1/crm/deals", { token: acme.access_token, tenant: "acme", body: { title: "Rocket sled", account_id: account.body.id } })).status).toBe(201);
    const op = await signIn();
    const list = await app.json("GET", "/api/v1/operator/organizations", { token: op });
    const id = (list.body.items as { id: string; subdomain: string }[]).find((o) => o.subdomain === "acme")!.id;
    expect(list.body.items.every((o: { being_deleted: boolean }) => o.being_deleted === false)).toBe(true);

    // Never on an organization's host.
    expect((await app.json("DELETE", `/api/v1/operator/organizations/${id}`, { token: op, tenant: "acme", body: { subdomain: "acme" } })).status).toBe(404);
    // Step-up: the sign-in counts for 10 minutes.
    clock.t += 11 * 60_000;
    const stale = await app.json("DELETE", `/api/v1/operator/organizations/${id}`, { token: op, body: { subdomain: "acme" } });
    expect(stale.status).toBe(403);
    expect(stale.body.code).toBe("reauthentication_required");
    expect((await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op, body: { password: OPERATOR_PASSWORD } })).status).toBe(200);
    // The wrong subdomain is a 422 on the field, and nothing happens.
    const wrong = await app.json("DELETE", `/api/v1/operator/organizations/${id}`, { token: op, body: { subdomain: "globex" } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail[0].loc).toEqual(["body", "subdomain"]);
    expect((await app.json("GET", "/api/v1/auth/me", { token: acme.access_token, tenant: "acme" })).status).toBe(200);
    expect((await app.json("DELETE", "/api/v1/operator/organizations/nosuchid", { token: op, body: { subdomain: "acme" } })).status).toBe(404);

    const r = await app.json("DELETE", `/api/v1/operator/organizations/${id}`, { token: op, body: { subdomain: " ACME " } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ id, subdomain: "acme", status: "deleting" });
    expect(r.body.export_url).toMatch(/^\/api\/v1\/operator\/exports\/[A-Za-z0-9_-]{43}$/);
    // From now on the organization answers 403.
    expect((await app.json("GET", "/api/v1/auth/me", { token: acme.access_token, tenant: "acme" })).body.code).toBe("tenant_disabled");
    const during = await app.json("GET", "/api/v1/operator/organizations?q=acme", { token: op });
    const marked = during.body.items as { being_deleted: boolean }[];
    // Either still being deleted, or already gone (the background work is quick here).
    expect(marked.length === 0 || marked[0]!.being_deleted).toBe(true);
    // Ask again while it runs: the same deletion (the run is shared), not a second one.
    await app.ctx.organizationDeletion.run(id).catch(() => null);
    expect(await app.ctx.organizationDeletion.pending()).toEqual([]);
    expect((await app.json("GET", "/api/v1/operator/organizations", { token: op })).body.items.map((o: { subdomain: string }) => o.subdomain)).toEqual(["globex"]);

    // The export, once: a tar of the three CSVs.
    expect((await app.json("GET", r.body.export_url, { token: op, tenant: "acme" })).status).toBe(404);
    const first = await app.request("GET", r.body.export_url, { token: op });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/x-tar");
    expect(first.headers.get("content-disposition")).toBe('attachment; filename="acme-export.tar"');
    const files = untar(new Uint8Array(await first.arrayBuffer()));
    expect([...files.keys()].sort()).toEqual(["acme/acme-accounts.csv", "acme/acme-contacts.csv", "acme/acme-deals.csv"]);
    expect(files.get("acme/acme-deals.csv")).toContain("Rocket sled");
    expect(files.get("acme/acme-accounts.csv")).toContain("Coyote");
    const again = await app.json("GET", r.body.export_url, { token: op });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("export_not_found");
    expect((await app.json("GET", r.body.export_url)).status).toBe(401);

    const audit = await app.json("GET", "/api/v1/operator/audit?size=100", { token: op });
    const rows = audit.body.items as AuditRow[];
    const started = rows.find((x) => x.action === "tenant.deletion_started")!;
    expect(started).toMatchObject({ operator: "ops@server.test", target: "organization:acme", detail: { actor: "operator", command: "operator console: delete", tenant_id: id } });
    const deleted = rows.find((x) => x.action === "tenant.deleted")!;
    expect(deleted).toMatchObject({ operator: "ops@server.test", target: "organization:acme", detail: { actor: "operator", name: "Acme Rockets" } });
    expect(Number(deleted.detail.rows)).toBeGreaterThan(0);
    // The export's folder (its name is the one-time token) stays out of the table every operator reads.
    expect(JSON.stringify(rows)).not.toContain(r.body.export_url.split("/").pop());
    expect(rows.find((x) => x.action === "organization.export_downloaded")).toMatchObject({ operator: "ops@server.test", target: "organization:acme" });
  });

  test("the export is not handed over while the deletion still runs", async () => {
    const { app, signIn } = await setup();
    await app.signup("acme");
    const op = await signIn();
    const del = app.ctx.organizationDeletion;
    const s = await del.start("acme", { actor: "ops@server.test", command: "operator console: delete" });
    await del.run(s.tenantId, { maxBatches: 1 });
    const early = await app.json("GET", `/api/v1/operator/exports/${s.state.export_token}`, { token: op });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe("export_not_ready");
    await del.run(s.tenantId);
    expect((await app.request("GET", `/api/v1/operator/exports/${s.state.export_token}`, { token: op })).status).toBe(200);
  });

  test("the command line's deletion is in the console's audit table too", async () => {
    const { app, signIn } = await setup();
    await app.signup("acme");
    // What `suite tenant delete acme` runs (src/cli/tenant-delete.ts), on the same context.
    const done = await app.ctx.organizationDeletion.deleteOrganization("acme", { actor: "cli", command: "tenant delete" });
    expect(done.finished).toBe(true);
    const op = await signIn();
    const rows = (await app.json("GET", "/api/v1/operator/audit?size=100", { token: op })).body.items as AuditRow[];
    for (const action of ["tenant.deletion_started", "tenant.deleted"]) {
      expect(rows.find((x) => x.action === action)).toMatchObject({ operator: null, target: "organization:acme", user_agent: "suite-cli", detail: { actor: "cli", command: "tenant delete" } });
    }
  });
});

describe("a test mail", () => {
  test("goes through the outbox as a plain mail; a bad address is a 422 on `to`; audited", async () => {
    const { app, signIn } = await setup();
    const op = await signIn();
    expect((await app.json("POST", "/api/v1/operator/mail/test", { token: op, tenant: "acme", body: { to: "me@example.com" } })).status).toBe(404);
    expect((await app.json("POST", "/api/v1/operator/mail/test", { body: { to: "me@example.com" } })).status).toBe(401);
    const bad = await app.json("POST", "/api/v1/operator/mail/test", { token: op, body: { to: "not an address" } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["body", "to"]);
    const ok = await app.json("POST", "/api/v1/operator/mail/test", { token: op, body: { to: " me@example.com " } });
    expect(ok.status).toBe(200);
    const rows = await app.ctx.repos.mail.list();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ tenant_id: null, kind: "test", recipient: "me@example.com", subject: "Test mail from Workspace Suite", status: "pending", link: null });
    expect(rows[0]!.text_body).toContain("the server can send mail");
    const queue = await app.json("GET", "/api/v1/operator/mail", { token: op });
    expect(queue.body.items[0]).toMatchObject({ organization: null, kind: "test", recipient: "m•••@example.com" });
    const audit = (await app.json("GET", "/api/v1/operator/audit", { token: op })).body.items as AuditRow[];
    expect(audit.find((x) => x.action === "mail.test_sent")).toMatchObject({ operator: "ops@server.test", target: `mail:${rows[0]!.id}`, detail: { recipient: "m•••@example.com" } });
  });
});
