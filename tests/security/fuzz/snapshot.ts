import type { Db } from "../../../src/db/database";

/**
 * What a refused request may legitimately write, and nothing else:
 * - rate_limits: every limited attempt is counted, refused or not (docs/interface.md#limits).
 * - audit_log: new rows of these failure actions only (failures are audited: docs/interface.md#audit).
 * - operator_audit: likewise, the operators' failed sign-ins and step-ups (src/operator).
 * - user_totp.failures / locked_until / updated_at: a wrong second-factor code counts toward the
 *   15-minute lock (docs/interface.md#limits).
 * sessions.last_used_at needs no exclusion: the fuzz clock stands still, so it is never touched.
 */
export const AUDITED_FAILURES = ["login.failure", "login.locked", "2fa.failure", "2fa.locked", "magic_link.invalid", "reauth.failure", "password.reset_invalid", "password.change_failure", "email.verification_invalid", "passkey.register_failure", "passkey.clone_suspected", "login.not_me_invalid"];
export const OPERATOR_AUDITED_FAILURES = ["sign_in.failure", "sign_in.locked", "sign_in.code_failure", "step_up.failure", "step_up.locked"];
/** The audit tables and the failure actions a refused request may add to each. */
const AUDIT_TABLES: Record<string, string[]> = { audit_log: AUDITED_FAILURES, operator_audit: OPERATOR_AUDITED_FAILURES };
const EXCLUDED_COLUMNS: Record<string, string[]> = { user_totp: ["failures", "locked_until", "updated_at"] };
const SKIPPED_TABLES = new Set(["rate_limits"]);

/** Hashes of every table's rows, with the exclusions above; compare two with `diffSnapshots`. */
export function snapshotter(db: Db) {
  const tables = (db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'").all() as { name: string }[])
    .map((r) => r.name)
    .filter((n) => !SKIPPED_TABLES.has(n));
  const listed = (actions: string[]) => actions.map((a) => `'${a}'`).join(", ");
  const statements = tables.map((table) => {
    const columns = (db.query(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[])
      .map((c) => c.name)
      .filter((c) => !EXCLUDED_COLUMNS[table]?.includes(c));
    const row = columns.map((c) => `quote("${c}")`).join(" || '|' || ");
    // Audit rows of failures may be added, never changed or removed: keep their count up to the
    // highest id seen, and hash every other row in full.
    const where = AUDIT_TABLES[table] ? `WHERE action NOT IN (${listed(AUDIT_TABLES[table])})` : "";
    return { table, query: db.query(`SELECT count(*) AS n, group_concat(${row}, char(10)) AS rows FROM "${table}" ${where}`) };
  });
  const audits = Object.entries(AUDIT_TABLES)
    .filter(([table]) => tables.includes(table))
    .map(([table, actions]) => ({
      table,
      rows: db.query(`SELECT count(*) AS n, max(id) AS top FROM ${table} WHERE action IN (${listed(actions)})`),
      upTo: db.query(`SELECT count(*) AS n FROM ${table} WHERE action IN (${listed(actions)}) AND id <= ?1`),
    }));

  // Nothing written since the last snapshot (no row changed by this connection, no commit by
  // another): that snapshot is still the database's. Hashing every table took about 4 ms a
  // request, most of the fuzz test's 120-138 s, and most refused requests write nothing.
  const marks = db.query("SELECT total_changes() AS changes, (SELECT data_version FROM pragma_data_version) AS version");
  let last: { mark: string; snap: Map<string, string> } | null = null;
  function take(): Map<string, string> {
    const m = marks.get() as { changes: number; version: number };
    const mark = `${m.changes}:${m.version}`;
    if (last?.mark === mark) return last.snap;
    const snap = hashAll();
    last = { mark, snap };
    return snap;
  }

  function hashAll(): Map<string, string> {
    const out = new Map<string, string>();
    for (const s of statements) {
      const r = s.query.get() as { n: number; rows: string | null };
      out.set(s.table, `${r.n}:${Bun.hash(r.rows ?? "").toString(36)}`);
    }
    for (const a of audits) {
      const f = a.rows.get() as { n: number; top: number | null };
      out.set(`${a.table}(failures)`, `${f.n}@${f.top ?? 0}`);
    }
    return out;
  }

  /** Tables that changed between two snapshots, beyond the exclusions. */
  function diff(before: Map<string, string>, after: Map<string, string>): string[] {
    const changed: string[] = [];
    for (const [table, hash] of before) {
      const audit = audits.find((a) => table === `${a.table}(failures)`);
      if (audit) {
        const [n, top] = hash.split("@").map(Number) as [number, number];
        const kept = (audit.upTo.get(top) as { n: number }).n;
        if (kept !== n) changed.push(`${audit.table} (a failure row changed or vanished)`);
      } else if (after.get(table) !== hash) changed.push(table);
    }
    return changed;
  }

  return { take, diff };
}
