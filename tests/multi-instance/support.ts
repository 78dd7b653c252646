/**
 * What the multi-instance tests share: three `suite serve` processes on a fresh, empty PostgreSQL
 * database of their own (they race to make its schema), an organization signed up through one of
 * them, and a way to wait for a condition by polling (never by timing: the machine may be slow).
 */
import { expect } from "bun:test";
import { type Instances, startInstances } from "../support/instances";
import { type EmptyDatabase, emptyPostgresDatabase } from "../support/pg-database";

export const ON_POSTGRES = process.env.SUITE_TEST_BACKEND === "postgres";
export const SKIP_NOTE = "(skipped unless SUITE_TEST_BACKEND=postgres)";

export const LOGIN = "/api/v1/auth/login";
export const ME = "/api/v1/auth/me";
export const REFRESH = "/api/v1/auth/refresh";
export const SESSIONS = "/api/v1/auth/sessions";

export interface Group {
  db: EmptyDatabase;
  group: Instances;
  close(): Promise<void>;
}

/** Three instances on a new empty database, started together; `env` goes to every one. */
export async function threeInstances(prefix: string, env: Record<string, string> = {}): Promise<Group> {
  const db = await emptyPostgresDatabase(prefix);
  const group = await startInstances(3, { databaseUrl: db.url, env }).catch(async (e) => {
    await db.drop();
    throw e;
  });
  return {
    db,
    group,
    async close() {
      await group.close();
      await db.drop();
    },
  };
}

export interface Org {
  subdomain: string;
  email: string;
  password: string;
  access_token: string;
  refresh_token: string;
}

/** Signs an organization up through instance `i`. */
export async function signup(g: Instances, i: number, subdomain: string): Promise<Org> {
  const email = `admin@${subdomain}.test`;
  const password = `correct horse battery ${Bun.hash(subdomain).toString(36)}`;
  const r = await g.call(i, "POST", "/api/v1/auth/signup", { body: { email, password, tenant_name: `Org ${subdomain}`, subdomain } });
  expect(r.status).toBe(201);
  return { subdomain, email, password, access_token: r.body.access_token, refresh_token: r.body.refresh_token };
}

/** The status and error code of an answer, for compact comparisons. */
export const denial = (r: { status: number; body: { code?: string } | null }) => ({ status: r.status, code: r.body?.code });

/** Polls `probe` until it answers true (up to `timeoutMs`); answers whether it did. */
export async function eventually(probe: () => Promise<boolean> | boolean, timeoutMs = 60_000, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await Bun.sleep(everyMs);
  }
}
