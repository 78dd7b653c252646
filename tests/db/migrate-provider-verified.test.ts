/**
 * Migration 14 (issue 29.1): users who joined through an identity provider had their address
 * marked verified by the join; that mark moves to `provider_verified_at`, and every other
 * verified address stays a mailed proof.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database";
import { CURRENT_PLAN, migrate } from "../../src/db/migrate";
import { MIGRATIONS } from "../../src/db/migrations";

test("a provider join's verified mark becomes the provider's; invited, mailed and unverified users keep theirs", () => {
  const db = openDatabase(":memory:");
  db.run(readFileSync(join(import.meta.dir, "fixtures", "schema-v1.sql"), "utf8"));
  db.run("PRAGMA user_version = 1");
  migrate(db, { schema: "", migrations: MIGRATIONS.filter((m) => m.version <= 13) });
  db.run("INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t1', 'Acme', 'acme', 1)");
  db.run(`INSERT INTO identity_providers (id, tenant_id, kind, name, issuer, client_id, client_secret_sealed, allowed_domains, auto_join, enabled, created_at, updated_at)
          VALUES ('p1', 't1', 'oidc', 'OP', 'https://op.test', 'c', 'x', '["example.com"]', 1, 1, 1, 1)`);
  const user = (id: string, created: number, verified: number | null) =>
    db.run("INSERT INTO users (id, tenant_id, email, role, password_hash, created_at, updated_at, email_verified_at) VALUES (?1, 't1', ?1 || '@example.com', 'member', 'h', ?2, ?2, ?3)", [id, created, verified]);
  const identity = (id: string, userId: string, created: number) =>
    db.run("INSERT INTO user_identities (id, tenant_id, user_id, provider_id, issuer, subject, created_at) VALUES (?1, 't1', ?2, 'p1', 'https://op.test', ?1, ?3)", [id, userId, created]);
  user("joiner", 100, 100);
  identity("i1", "joiner", 100);
  user("linker", 100, 150); // proved by mail at 150, linked an identity later
  identity("i2", "linker", 200);
  user("mailed", 100, 120);
  user("unproven", 100, null);

  expect(migrate(db, CURRENT_PLAN).to).toBe(MIGRATIONS.at(-1)!.version);
  const rows = db.query("SELECT id, email_verified_at, provider_verified_at FROM users ORDER BY id").all();
  expect(rows).toEqual([
    { id: "joiner", email_verified_at: null, provider_verified_at: 100 },
    { id: "linker", email_verified_at: 150, provider_verified_at: null },
    { id: "mailed", email_verified_at: 120, provider_verified_at: null },
    { id: "unproven", email_verified_at: null, provider_verified_at: null },
  ]);
  db.close();
});
