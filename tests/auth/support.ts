import { SignJWT } from "jose";
import type { SessionRow } from "../../src/auth/repo";
import { hashToken, newId } from "../../src/kernel/ids";
import { type TestApp, type TestAppOptions, testApp } from "../helpers";
import { insertUser, testSql } from "../support/sql";

export const LOGIN = "/api/v1/auth/login";
export const REFRESH = "/api/v1/auth/refresh";
export const ME = "/api/v1/auth/me";
export const SESSIONS = "/api/v1/auth/sessions";

/** A clock the test moves by hand. */
export function clock(start = Date.UTC(2030, 0, 1)) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** A test app on a hand-moved clock. */
export function clockedApp(opts: Omit<TestAppOptions, "now"> = {}) {
  const c = clock();
  const t = testApp({ ...opts, now: c.now });
  return { t, clock: c };
}

/** Signs in by password; answers the harness's response with the parsed body. */
export const login = (t: TestApp, email: string, password: string, headers: Record<string, string> = {}) =>
  t.json("POST", LOGIN, { body: { email, password }, headers });

/** The claims of a JWT, unverified. */
export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
}

/** The app's own signing key, as the server keeps it in its database. */
export const signingKey = (t: TestApp) => new TextEncoder().encode(t.ctx.keys.jwtSecret);

/**
 * A token signed with the app's key: by default a valid access token for `base` (a real token,
 * whose sub/tid/sid are copied); `claims` and `header` override what they name.
 */
export async function forge(
  t: TestApp,
  base: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
  key: Uint8Array = signingKey(t),
): Promise<string> {
  const real = claimsOf(base);
  const nowS = Math.floor(t.ctx.now() / 1000);
  const payload: Record<string, unknown> = {
    iss: "workspace-suite",
    aud: "workspace-suite-api",
    sub: real.sub,
    tid: real.tid,
    sid: real.sid,
    typ: "access",
    jti: newId(),
    iat: nowS,
    exp: nowS + 600,
    ...claims,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "JWT", ...header } as { alg: string }).sign(key);
}

/** An unsigned `alg: none` token carrying the same claims as `base`. */
export function unsigned(base: string): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${enc({ alg: "none", typ: "JWT" })}.${base.split(".")[1]}.`;
}

/** A second user of an existing organization, written straight to the database. */
export async function addMember(t: TestApp, tenantId: string, email: string, password: string) {
  const id = newId();
  const hash = await t.ctx.hasher.hash(password);
  await insertUser(t.ctx, {
    id,
    tenant_id: tenantId,
    email,
    full_name: null,
    role: "member",
    profile_id: null,
    password_hash: hash,
    created_at: t.ctx.now(),
  });
  return { id, email, password };
}

/** Every audit row of the database, whatever its tenant. */
export const allAudit = (t: TestApp) => testSql(t.ctx).all<Record<string, unknown>>("SELECT * FROM audit_log ORDER BY id");

/** Asserts nothing; answers the 401 essentials of a response for one `expect`. */
export const denial = (r: { status: number; headers: Headers; body: { code?: string } | null }) => ({
  status: r.status,
  code: r.body?.code,
  www: r.headers.get("www-authenticate"),
});

/** The session row behind a token (access or refresh): found by the hash of its secret sid, as the server does. */
export const sessionOf = (t: TestApp, token: string) =>
  testSql(t.ctx).get<SessionRow>("SELECT * FROM sessions WHERE sid_hash = ?1", hashToken(claimsOf(token).sid as string));

/** The public id of the session behind a token: what GET /auth/sessions lists and revoke takes. */
export const sessionIdOf = async (t: TestApp, token: string): Promise<string> => (await sessionOf(t, token))!.id;
