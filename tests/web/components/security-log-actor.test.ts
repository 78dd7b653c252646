import { expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { KNOWN_ACTIONS, actorLabel, deviceLabel } from "../../../web/security-log/view";
import { EVENT_TYPES } from "../../../src/events/repo";

const row = (o: Partial<Parameters<typeof actorLabel>[0]>) => ({ user_id: null, user_email: null, user_name: null, detail: null, ...o });

test("the Who column names the command line for the operator's rows, else the member", () => {
  expect(actorLabel(row({ detail: { actor: "cli", command: "suite user unlock" } }))).toBe("Command line");
  // The operator console (src/operator) says that the server's operator acted, not which one.
  expect(actorLabel(row({ detail: { actor: "operator" } }))).toBe("Server operator");
  expect(actorLabel(row({ user_id: "u1", user_email: "a@acme.io", user_name: "Ann" }))).toBe("Ann");
  expect(actorLabel(row({ user_id: "u1", user_email: "a@acme.io" }))).toBe("a@acme.io");
  expect(actorLabel(row({ user_id: "gone" }))).toBe("Former member");
  expect(actorLabel(row({}))).toBeNull();
});

test("the action filter knows what the command line writes", () => {
  const known = KNOWN_ACTIONS.flatMap(([, a]) => a);
  for (const a of ["user.password_set", "user.2fa_reset", "user.unlocked", "user.removed", "tenant.disabled", "tenant.enabled"]) expect(known).toContain(a);
});

test("the Device column says the command line for the operator's rows", () => {
  const device = (ua: string | null) => `device of ${ua}`;
  expect(deviceLabel({ user_agent: "suite-cli", detail: { actor: "cli" } }, device)).toBe("Command line (suite)");
  expect(deviceLabel({ user_agent: "suite-operator-console", detail: { actor: "operator" } }, device)).toBe("Operator console");
  expect(deviceLabel({ user_agent: "Mozilla/5.0", detail: null }, device)).toBe("device of Mozilla/5.0");
});

test("the action filter lists every action the server writes to the audit log", () => {
  const src = join(import.meta.dir, "..", "..", "..", "src");
  const written = new Set<string>();
  for (const file of readdirSync(src, { recursive: true }) as string[]) {
    // The operators' own actions (src/operator) go to the server's audit (the console's Audit screen), not an organization's.
    if (!file.endsWith(".ts") || file.startsWith("operator/")) continue;
    const text = readFileSync(join(src, file), "utf8");
    for (const m of text.matchAll(/"((?:login|reauth|magic_link|session|2fa|tenant|invitation|user|crm|identity|oauth|password|email)\.[a-z_0-9]+)"/g)) written.add(m[1]!);
  }
  expect(written.size).toBeGreaterThan(40);
  const known = new Set(KNOWN_ACTIONS.flatMap(([, a]) => a));
  // The event log's types (src/events) look like actions but are not written to the audit log.
  const events = new Set<string>(EVENT_TYPES);
  // The server's own audit entries (src/organization/server-audit.ts) go to the server's log and the
  // operator console: the organization they name is being deleted, so its security log cannot hold them.
  const serverAudit = new Set(["tenant.deletion_started", "tenant.deleted"]);
  expect([...written].filter((a) => !known.has(a) && !events.has(a) && !serverAudit.has(a)).sort()).toEqual([]);
});
