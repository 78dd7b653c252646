import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { noteSecret } from "../security/ledger";
import { testApp } from "../helpers";
import { startServer } from "../server";
import { fails, ok, suite, tableRows } from "./user-tenant-kit";

/**
 * `suite tenant delete SUBDOMAIN [--yes]` on a SQLite file: the confirmation (the subdomain typed
 * again, or --yes), the final export it prints, and a deletion a crash interrupted, finished by
 * the command run again and by the next `suite serve`.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-tenant-delete-"));
const db = join(dir, "suite.db");
const PASSWORD = "tenant owner password";
noteSecret("password", PASSWORD);
const SLOW = 120_000;

const create = (sub: string) =>
  suite(db, ["tenant", "create", "--name", `Org ${sub}`, "--subdomain", sub, "--admin-email", `admin@${sub}.test`], { env: { SUITE_NEW_PASSWORD: PASSWORD } });
const subdomains = async () => tableRows(ok(await suite(db, ["tenant", "list"]))).map((r) => r.SUBDOMAIN);
const rowsOf = (tenantId: string) => {
  const d = new Database(db, { readonly: true });
  try {
    return (d.query("SELECT count(*) AS n FROM users WHERE tenant_id = ?1").get(tenantId) as { n: number }).n;
  } finally {
    d.close();
  }
};
const idOf = (sub: string) => {
  const d = new Database(db, { readonly: true });
  try {
    return (d.query("SELECT id FROM tenants WHERE subdomain = ?1").get(sub) as { id: string }).id;
  } finally {
    d.close();
  }
};

/** Begins the deletion of `sub` and stops after one batch, as a process killed half-way leaves it. */
async function interrupted(sub: string): Promise<void> {
  const t = testApp({ db });
  try {
    await t.ctx.organizationDeletion.run(await t.ctx.organizationDeletion.begin(sub, { actor: "cli", command: "tenant delete" }), { maxBatches: 1 });
  } finally {
    await t.close();
  }
}

beforeAll(async () => {
  for (const sub of ["acme", "beta", "gamma", "delta", "omega"]) ok(await create(sub));
}, SLOW);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("suite tenant delete", () => {
  test("a subdomain typed wrong at the prompt deletes nothing (exit 64)", async () => {
    const r = await suite(db, ["tenant", "delete", "acme"], { stdin: "acmee\n" });
    expect(r.code).toBe(64);
    expect(r.stderr).toContain("Type its subdomain to confirm");
    expect(r.stderr).toContain("suite: the subdomain typed (acmee) is not acme; nothing was deleted");
    expect(await subdomains()).toContain("acme");
  }, SLOW);

  test("an unknown subdomain is a usage error", async () => {
    expect(fails(await suite(db, ["tenant", "delete", "nope", "--yes"]), 64)).toBe("suite: no organization has the subdomain nope; see suite tenant list");
  }, SLOW);

  test("the subdomain typed again deletes it: prints the export's files (0600, readable), writes the server audit line, and leaves the others", async () => {
    const id = idOf("acme");
    const r = await suite(db, ["tenant", "delete", "acme"], { stdin: "acme\n" });
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n").filter(Boolean);
    expect(lines[0]).toMatch(new RegExp(`^deleted acme \\(${id}\\): \\d+ rows in \\d+ batches$`));
    const folder = /final export, kept 7 days .*: (\S+)$/.exec(lines[1]!)![1]!;
    expect(folder.startsWith(join(dir, "deleted-organizations"))).toBe(true);
    const files = lines.slice(2).map((l) => l.trim());
    expect(files.map((f) => f.slice(folder.length + 1)).sort()).toEqual(["acme-accounts.csv", "acme-contacts.csv", "acme-deals.csv"]);
    for (const f of files) {
      expect(statSync(f).mode & 0o777).toBe(0o600);
      expect(readFileSync(f, "utf8").split("\n")[0]).toContain("id");
    }
    const audit = r.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    expect(audit.map((a) => a.action)).toEqual(["tenant.deletion_started", "tenant.deleted"]);
    expect(audit[1]).toMatchObject({ msg: "server audit", actor: "cli", command: "tenant delete", tenant_id: id, subdomain: "acme", export: folder });
    // The same two entries in the operator console's audit table, as the command line's, without the export's folder (its name is the token).
    const d = new Database(db, { readonly: true });
    const consoleRows = d.query("SELECT operator_email, action, target, user_agent, detail FROM operator_audit WHERE action LIKE 'tenant.%' ORDER BY id").all() as {
      operator_email: string | null; action: string; target: string; user_agent: string; detail: string;
    }[];
    d.close();
    expect(consoleRows.map((x) => [x.action, x.operator_email, x.target, x.user_agent])).toEqual([
      ["tenant.deletion_started", null, "organization:acme", "suite-cli"],
      ["tenant.deleted", null, "organization:acme", "suite-cli"],
    ]);
    expect(JSON.parse(consoleRows[1]!.detail)).toMatchObject({ actor: "cli", command: "tenant delete", tenant_id: id });
    expect(consoleRows[1]!.detail).not.toContain(folder.split("/").pop()!);
    expect(rowsOf(id)).toBe(0);
    expect(await subdomains()).toEqual(["beta", "gamma", "delta", "omega"]);
  }, SLOW);

  test("--yes deletes without asking", async () => {
    const r = await suite(db, ["tenant", "delete", "beta", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("deleted beta");
    expect(r.stderr).not.toContain("Type its subdomain");
    expect(await subdomains()).toEqual(["gamma", "delta", "omega"]);
  }, SLOW);

  test("a deletion a crash interrupted: the organization is disabled meanwhile, and the command run again finishes it", async () => {
    const id = idOf("gamma");
    await interrupted("gamma");
    expect(tableRows(ok(await suite(db, ["tenant", "list"]))).find((r) => r.SUBDOMAIN === "gamma")!.DISABLED).toMatch(/^disabled /);
    const r = await suite(db, ["tenant", "delete", "gamma", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("deleted gamma");
    expect(r.stdout).toContain("finishing a deletion that had been interrupted");
    expect(rowsOf(id)).toBe(0);
    expect(await subdomains()).toEqual(["delta", "omega"]);
  }, SLOW);

  test("a deletion a crash interrupted is finished by the next suite serve, which logs the server audit entry", async () => {
    const id = idOf("delta");
    await interrupted("delta");
    const server = await startServer(db);
    try {
      // 403 tenant_disabled while the rows go, 404 tenant_not_found once the organization is gone.
      const signIn = () => server.call("POST", "/api/v1/auth/login", { tenant: "delta", body: { email: "admin@delta.test", password: PASSWORD } });
      for (let i = 0; i < 200 && existsSync(db); i++) {
        if ((await signIn()).status === 404) break;
        await Bun.sleep(100);
      }
      const gone = await signIn();
      expect(gone.status).toBe(404);
      expect((gone.body as { code: string }).code).toBe("tenant_not_found");
    } finally {
      const stopped = await server.stop();
      const audit = stopped.stdout.split("\n").filter((l) => l.includes('"server audit"')).map((l) => JSON.parse(l));
      expect(audit.map((a) => a.action)).toEqual(["tenant.deleted"]);
      expect(audit[0]).toMatchObject({ tenant_id: id, subdomain: "delta" });
    }
    expect(rowsOf(id)).toBe(0);
    expect(await subdomains()).toEqual(["omega"]);
  }, SLOW);
});
