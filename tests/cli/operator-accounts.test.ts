import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { noteSecret } from "../security/ledger";
import { fails, ok, suite, tableRows } from "./user-tenant-kit";

/**
 * Issue 34, item 4: `suite operator create|list|remove`, the accounts of the operator console,
 * apart from every organization's users. The password as for every command that takes one.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-operators-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
async function freshDb(): Promise<string> {
  const db = join(dir, `d${++n}`, "suite.db");
  mkdirSync(join(dir, `d${n}`));
  ok(await suite(db, ["migrate"]));
  return db;
}
const SLOW = 120_000;
const PASSWORD = "plum kettle orbit 4471";
noteSecret("password", PASSWORD);

const operatorRow = (db: string, email: string) => {
  const d = new Database(db, { readonly: true });
  try {
    return d.query("SELECT email, password_hash, totp_secret FROM operators WHERE email = ?1").get(email) as { email: string; password_hash: string; totp_secret: string } | null;
  } finally {
    d.close();
  }
};

describe("suite operator", () => {
  test("create takes the password from SUITE_NEW_PASSWORD or stdin, prints the TOTP secret and URI once; list shows it; remove takes it away", async () => {
    const db = await freshDb();
    const made = ok(await suite(db, ["operator", "create", "--email", "Ops@Server.Test"], { env: { SUITE_NEW_PASSWORD: PASSWORD } }));
    const secret = /secret: ([A-Z2-7]{32})/.exec(made)?.[1];
    expect(secret).toBeDefined();
    // Not noted as a secret of the ledger: printing it once, to the operator who made the account, is the point.
    expect(made).toContain(`otpauth://totp/Workspace%20Suite%20operator:ops@server.test?issuer=Workspace%20Suite%20operator&secret=${secret}`);
    expect(made).toContain("/operator");
    const row = operatorRow(db, "ops@server.test")!;
    expect(await Bun.password.verify(PASSWORD, row.password_hash)).toBe(true);
    // Sealed at rest: the database holds no usable secret.
    expect(row.totp_secret).not.toContain(secret!);

    ok(await suite(db, ["operator", "create", "--email", "second@server.test"], { stdin: "another plum kettle 99\n" }));
    const list = tableRows(ok(await suite(db, ["operator", "list"])));
    expect(list.map((r) => [r.EMAIL, r["LAST SIGN-IN"]])).toEqual([["ops@server.test", "never"], ["second@server.test", "never"]]);
    // The list shows no secret, no hash.
    expect(JSON.stringify(list)).not.toContain(secret!);

    expect(ok(await suite(db, ["operator", "remove", "--email", "second@server.test"]))).toContain("removed operator second@server.test");
    expect(tableRows(ok(await suite(db, ["operator", "list"]))).map((r) => r.EMAIL)).toEqual(["ops@server.test"]);
    expect(fails(await suite(db, ["operator", "remove", "--email", "second@server.test"]), 64)).toContain("no operator has the email second@server.test");
    // Operators are nobody's users.
    const d = new Database(db, { readonly: true });
    expect((d.query("SELECT count(*) AS n FROM users").get() as { n: number }).n).toBe(0);
    d.close();
  }, SLOW);

  test("refused: --password, a common password, a taken address, a missing --email; nothing is created", async () => {
    const db = await freshDb();
    expect(fails(await suite(db, ["operator", "create", "--email", "a@server.test", "--password", PASSWORD]), 64)).toContain("never given as an option");
    expect(fails(await suite(db, ["operator", "create", "--email", "a@server.test"], { env: { SUITE_NEW_PASSWORD: "password123" } }), 64)).toContain("common or leaked passwords");
    expect(fails(await suite(db, ["operator", "create", "--email", "a@server.test"], { env: { SUITE_NEW_PASSWORD: "short" } }), 64)).toContain("8 to 128 characters");
    expect(operatorRow(db, "a@server.test")).toBeNull();
    ok(await suite(db, ["operator", "create", "--email", "a@server.test"], { env: { SUITE_NEW_PASSWORD: PASSWORD } }));
    expect(fails(await suite(db, ["operator", "create", "--email", "A@server.test"], { env: { SUITE_NEW_PASSWORD: PASSWORD } }), 64)).toContain("already exists");
    expect(fails(await suite(db, ["operator", "create"]), 64)).toContain("missing --email");
    expect(ok(await suite(await freshDb(), ["operator", "list"]))).toContain("no operators yet");
  }, SLOW);
});
