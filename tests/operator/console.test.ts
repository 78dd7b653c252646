import { describe, expect, test } from "bun:test";
import { storageEstimate } from "../../src/operator/console-service";
import { OPERATOR_PASSWORD, operatorAppPerTest } from "./operator-kit";

/** Issue 34, item 4: the console's views and actions (organizations, mail, jobs, server, audit). */

const setup = operatorAppPerTest();

describe("organizations", () => {
  test("search by name or subdomain, with members, deals, created and last activity", async () => {
    const { app, signIn } = await setup();
    const acme = await app.signup("acme", { tenant_name: "Acme Rockets" });
    await app.signup("globex", { tenant_name: "Globex 100%" });
    const account = await app.json("POST", "/api/v1/crm/accounts", { token: acme.access_token, tenant: "acme", body: { name: "Coyote" } });
    expect(account.status).toBe(201);
    const deal = await app.json("POST", "/api/v1/crm/deals", { token: acme.access_token, tenant: "acme", body: { title: "Rocket", account_id: account.body.id } });
    expect(deal.status).toBe(201);
    const op = await signIn();
    const all = await app.json("GET", "/api/v1/operator/organizations", { token: op });
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(2);
    const byName = await app.json("GET", "/api/v1/operator/organizations?q=ROCKET", { token: op });
    expect(byName.body.items).toHaveLength(1);
    expect(byName.body.items[0]).toMatchObject({ subdomain: "acme", name: "Acme Rockets", members: 1, deals: 1, disabled_at: null });
    // The storage estimate follows the counts it is made from: one deal and one member here.
    expect(byName.body.items[0].storage_estimate_bytes).toBe(storageEstimate(1, 1));
    expect(storageEstimate(1, 1)).toBe(2_048 + 16_384);
    expect(byName.body.items[0].last_activity_at).not.toBeNull();
    expect((await app.json("GET", "/api/v1/operator/organizations?q=glob", { token: op })).body.items.map((o: { subdomain: string }) => o.subdomain)).toEqual(["globex"]);
    // % and _ are taken literally.
    expect((await app.json("GET", "/api/v1/operator/organizations?q=100%25", { token: op })).body.total).toBe(1);
    expect((await app.json("GET", "/api/v1/operator/organizations?q=%25", { token: op })).body.total).toBe(1);
    expect((await app.json("GET", "/api/v1/operator/organizations?size=0", { token: op })).status).toBe(422);
  });

  test("disable and enable need the password within 10 minutes; both are audited in the server's log and the organization's", async () => {
    const { app, clock, signIn } = await setup();
    const acme = await app.signup("acme");
    const op = await signIn();
    clock.t += 11 * 60_000;
    const refused = await app.json("POST", "/api/v1/operator/organizations/acme/disable", { token: op });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("reauthentication_required");
    expect((await app.json("GET", "/api/v1/auth/me", { token: acme.access_token, tenant: "acme" })).status).toBe(200);

    const wrong = await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op, body: { password: "not it at all" } });
    expect(wrong.status).toBe(401);
    expect((await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op, body: { password: OPERATOR_PASSWORD } })).status).toBe(200);
    const off = await app.json("POST", "/api/v1/operator/organizations/acme/disable", { token: op });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ subdomain: "acme", disabled: true, changed: true });
    const blocked = await app.json("GET", "/api/v1/auth/me", { token: acme.access_token, tenant: "acme" });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe("tenant_disabled");
    expect((await app.json("POST", "/api/v1/operator/organizations/nosuch/disable", { token: op })).status).toBe(404);
    const on = await app.json("POST", "/api/v1/operator/organizations/acme/enable", { token: op });
    expect(on.body).toEqual({ subdomain: "acme", disabled: false, changed: true });
    expect((await app.json("GET", "/api/v1/auth/me", { token: acme.access_token, tenant: "acme" })).status).toBe(200);

    const audit = await app.json("GET", "/api/v1/operator/audit?size=100", { token: op });
    const rows = audit.body.items as { action: string; operator: string; target: string | null }[];
    expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(["organization.disabled", "organization.enabled", "step_up.success", "step_up.failure", "sign_in.success"]));
    expect(rows.find((r) => r.action === "organization.disabled")).toMatchObject({ operator: "ops@server.test", target: "organization:acme" });
    // The organization's own log says the server's operator did it, not who.
    const log = await app.json("GET", "/api/v1/audit-log?action=tenant.disabled", { token: acme.access_token, tenant: "acme" });
    expect(log.body.items).toHaveLength(1);
    expect(log.body.items[0].detail).toEqual({ actor: "operator", subdomain: "acme" });
  });
});

describe("mail queue", () => {
  test("waiting mail with masked recipients; retry sends it now; discard needs step-up; failed mail can only be discarded", async () => {
    const { app, clock, signIn } = await setup();
    await app.signup("acme");
    const op = await signIn();
    const page = await app.json("GET", "/api/v1/operator/mail", { token: op });
    expect(page.status).toBe(200);
    expect(page.body.total).toBeGreaterThan(0);
    const mail = page.body.items[0];
    expect(mail).toMatchObject({ organization: "acme", status: "pending", recipient: "a•••@acme.test" });
    expect(JSON.stringify(page.body)).not.toContain("admin@acme.test");
    const before = (await app.ctx.repos.mail.byId(mail.id))!;
    await app.ctx.repos.mail.claimDue(clock.t + 1000, clock.t + 2000, 10);
    await app.ctx.repos.mail.markRetry(mail.id, clock.t + 3_600_000, "connection refused");
    const retried = await app.json("POST", `/api/v1/operator/mail/${mail.id}/retry`, { token: op });
    expect(retried.status).toBe(200);
    expect((await app.ctx.repos.mail.byId(mail.id))!.next_attempt_at).toBe(clock.t);
    expect(before.status).toBe("pending");

    clock.t += 11 * 60_000;
    expect((await app.json("DELETE", `/api/v1/operator/mail/${mail.id}`, { token: op })).body.code).toBe("reauthentication_required");
    await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op, body: { password: OPERATOR_PASSWORD } });
    expect((await app.json("DELETE", `/api/v1/operator/mail/${mail.id}`, { token: op })).status).toBe(200);
    expect(await app.ctx.repos.mail.byId(mail.id)).toBeNull();
    const gone = await app.json("POST", `/api/v1/operator/mail/${mail.id}/retry`, { token: op });
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe("mail_not_found");
    expect((await app.json("GET", "/api/v1/operator/mail?status=sent", { token: op })).status).toBe(422);
    const actions = (await app.ctx.repos.operators.auditPage(100, 0)).rows.map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["mail.retried", "mail.discarded"]));
  });
});

describe("overview, jobs and server", () => {
  test("the overview counts organizations, mail and running jobs, and this instance's requests per minute", async () => {
    const { app, signIn } = await setup();
    await app.signup("acme");
    const op = await signIn();
    const r = await app.json("GET", "/api/v1/operator/overview", { token: op });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ organizations: 1, organizations_disabled: 0, jobs_running: 0 });
    expect(r.body.mail_pending).toBeGreaterThan(0);
    expect(r.body.requests_per_minute).toHaveLength(24 * 60);
    expect(r.body.requests_per_minute.at(-1)).toBeGreaterThan(1);
    // The hourly figures count the same requests (the hour holds at least this minute's).
    expect(r.body.hours).toHaveLength(24);
    expect(r.body.hours.at(-1).requests).toBeGreaterThanOrEqual(r.body.requests_per_minute.at(-1));
    expect(r.body.hours.at(-1).p99_ms).not.toBeNull();
    const jobs = await app.json("GET", "/api/v1/operator/jobs", { token: op });
    expect(jobs.body).toMatchObject({ items: [], total: 0 });
  });

  test("the server answer shows the settings in effect but never a secret's value", async () => {
    const secrets = {
      SUITE_JWT_SECRET: "jwt-secret-value-0123456789abcdef0123456789",
      SUITE_ENCRYPTION_KEY: "encryption-key-value-0123456789abcdef012345",
      SUITE_SMTP_URL: "smtp://mailer:smtp-password-value@127.0.0.1:2525",
      SUITE_METRICS_TOKEN: "metrics-token-value-0123456789abcdef01234",
    };
    const { app, signIn } = await setup(secrets);
    const op = await signIn();
    const r = await app.json("GET", "/api/v1/operator/server", { token: op });
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body);
    for (const v of [...Object.values(secrets), "smtp-password-value", "mailer:", app.ctx.keys.encryptionKey, app.ctx.keys.refreshKey]) expect(text).not.toContain(v);
    const byName = Object.fromEntries((r.body.settings as { name: string; value: string; secret: boolean }[]).map((s) => [s.name, s]));
    for (const name of Object.keys(secrets)) expect(byName[name]).toEqual({ name, value: "set", secret: true });
    expect(byName.SUITE_BASE_DOMAIN).toEqual({ name: "SUITE_BASE_DOMAIN", value: "localhost", secret: false });
    expect(r.body).toMatchObject({ database: app.ctx.repos.kind, key_file_present: false, version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(r.body.database_bytes).toBeGreaterThan(0);
    // This process among the instances the database sees, marked as the one answering.
    const mine = (r.body.instances as { name: string; this_instance: boolean; connections: number }[]).filter((i) => i.this_instance);
    expect(mine.map((i) => i.name)).toEqual([`workspace-suite:${process.pid}`]);
    expect(mine[0]!.connections).toBeGreaterThanOrEqual(1);
  });
});
