import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ME, REFRESH, claimsOf, clockedApp, denial, forge, unsigned } from "./support";
import { createTokens } from "../../src/auth/tokens";

const { t } = clockedApp();
afterAll(() => t.close());

let org: Awaited<ReturnType<typeof t.signup>>;
beforeAll(async () => {
  org = await t.signup("acme");
});

const me = (token: string) => t.json("GET", ME, { token });
const invalid = { status: 401, code: "token_invalid", www: "Bearer" };

describe("access tokens", () => {
  test("control: a token forged with the app's key and correct claims is accepted", async () => {
    // Proves the forging below is faithful, so each refusal is due to the one thing changed.
    const r = await me(await forge(t, org.access_token));
    expect(r.status).toBe(200);
    expect(r.body.user.id).toBe(org.user.id);
  });

  test("alg none is refused", async () => {
    expect(denial(await me(unsigned(org.access_token)))).toEqual(invalid);
    // Even with a signature part left in place.
    const [, payload, sig] = org.access_token.split(".");
    const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    expect(denial(await me(`${header}.${payload}.${sig}`))).toEqual(invalid);
  });

  test("another algorithm than HS256 is refused, even with the right key", async () => {
    expect(denial(await me(await forge(t, org.access_token, {}, { alg: "HS512" })))).toEqual(invalid);
  });

  test("a foreign aud is refused", async () => {
    expect(denial(await me(await forge(t, org.access_token, { aud: "some-other-api" })))).toEqual(invalid);
    expect(denial(await me(await forge(t, org.access_token, { aud: ["some-other-api"] })))).toEqual(invalid);
  });

  test("a foreign iss is refused", async () => {
    expect(denial(await me(await forge(t, org.access_token, { iss: "https://evil.example" })))).toEqual(invalid);
  });

  test("a token signed with another key is refused", async () => {
    const other = new TextEncoder().encode("x".repeat(64));
    expect(denial(await me(await forge(t, org.access_token, {}, {}, other)))).toEqual(invalid);
  });

  test("a tampered signature is refused", async () => {
    const [h, p, sig] = org.access_token.split(".");
    // Change a character in the middle (the last one carries padding bits a decoder may ignore).
    const i = 10;
    const flipped = sig!.slice(0, i) + (sig![i] === "A" ? "B" : "A") + sig!.slice(i + 1);
    expect(denial(await me(`${h}.${p}.${flipped}`))).toEqual(invalid);
  });

  test("a tampered payload under the original signature is refused", async () => {
    const [h, p, sig] = org.access_token.split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString());
    const changed = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 86400 })).toString("base64url");
    expect(denial(await me(`${h}.${changed}.${sig}`))).toEqual(invalid);
  });

  test("a token missing a required claim is refused", async () => {
    for (const claim of ["sid", "tid", "jti", "exp"]) {
      const r = await me(await forge(t, org.access_token, { [claim]: undefined }));
      expect({ claim, ...denial(r) }).toEqual({ claim, ...invalid });
    }
  });

  test("a token naming a session that does not exist, or another user's, is refused", async () => {
    expect(denial(await me(await forge(t, org.access_token, { sid: "no-such-session" })))).toEqual(invalid);
    const other = await t.signup("other");
    // acme's user id with other's session: the session does not belong to that subject.
    expect(denial(await me(await forge(t, org.access_token, { sid: claimsOf(other.access_token).sid })))).toEqual(invalid);
  });

  test("a refresh token or a 2fa token used as an access token is refused", async () => {
    expect(denial(await me(org.refresh_token))).toEqual(invalid);
    expect(denial(await t.json("GET", ME, { cookies: { svc_session: org.refresh_token } }))).toEqual(invalid);
    expect(denial(await me(await forge(t, org.access_token, { typ: "2fa" })))).toEqual(invalid);
    expect(denial(await me(await forge(t, org.access_token, { typ: undefined })))).toEqual(invalid);
  });

  test("garbage in the bearer header is refused", async () => {
    for (const token of ["x", "a.b.c", "eyJhbGciOiJIUzI1NiJ9..", org.access_token.split(".").slice(0, 2).join(".")]) {
      const r = await me(token);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe("Bearer");
      expect(["token_invalid", "not_authenticated"]).toContain(r.body.code);
    }
  });
});

describe("expiry", () => {
  test("an expired access token answers token_expired", async () => {
    const { t, clock } = clockedApp();
    const org = await t.signup("late");
    const me = (token: string) => t.json("GET", ME, { token });
    const login = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password } });
    const token = login.body.access_token;
    expect((await me(token)).status).toBe(200);
    clock.advance(14 * 60_000);
    expect((await me(token)).status).toBe(200);
    clock.advance(60_000 + 1000);
    expect(denial(await me(token))).toEqual({ status: 401, code: "token_expired", www: "Bearer" });
    // The session itself lives on: its refresh token still works.
    const r = await t.json("POST", REFRESH, { body: { refresh_token: login.body.refresh_token } });
    expect(r.status).toBe(200);
    expect((await me(r.body.access_token)).status).toBe(200);
    t.close();
  });
});

describe("refresh endpoint token checks", () => {
  test("an access token presented at /auth/refresh is refused", async () => {
    const r = await t.json("POST", REFRESH, { body: { refresh_token: org.access_token } });
    expect(denial(r)).toEqual(invalid);
    expect(r.res.headers.getSetCookie()).toEqual([]);
  });

  test("a signed refresh token with an unknown jti is treated as reuse: the session ends", async () => {
    const own = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password } });
    const forged = await forge(t, own.body.refresh_token, { typ: "refresh", jti: "made-up", exp: claimsOf(own.body.refresh_token).exp });
    const r = await t.json("POST", REFRESH, { body: { refresh_token: forged } });
    expect(denial(r)).toEqual({ status: 401, code: "session_revoked", www: "Bearer" });
    expect((await me(own.body.access_token)).body.code).toBe("session_revoked");
    // Other sessions of the user are untouched.
    expect((await me(org.access_token)).status).toBe(200);
  });

  test("a refresh token with a foreign aud is refused", async () => {
    const c = claimsOf(org.refresh_token);
    const forged = await forge(t, org.refresh_token, { typ: "refresh", jti: c.jti, iat: c.iat, exp: c.exp, aud: "elsewhere" });
    expect(denial(await t.json("POST", REFRESH, { body: { refresh_token: forged } }))).toEqual(invalid);
  });
});

describe("tenant binding", () => {
  test("a valid token on another organization's host or X-Tenant: 403 tenant_mismatch", async () => {
    await t.signup("rival");
    const byHeader = await t.json("GET", ME, { token: org.access_token, headers: { "x-tenant": "rival" } });
    expect(byHeader.status).toBe(403);
    expect(byHeader.body.code).toBe("tenant_mismatch");
    const byHost = await t.json("GET", ME, { token: org.access_token, tenant: "rival" });
    expect(byHost.status).toBe(403);
    expect(byHost.body.code).toBe("tenant_mismatch");
    expect((await t.json("GET", ME, { token: org.access_token, tenant: "acme" })).status).toBe(200);
  });

  test("a token whose tid was changed to another tenant's is refused", async () => {
    const rival = await t.signup("rival2");
    const forged = await forge(t, org.access_token, { tid: rival.tenant.id });
    expect(denial(await me(forged))).toEqual(invalid);
  });
});

describe("missing or unusable credentials", () => {
  test("no credentials: 401 not_authenticated", async () => {
    const r = await t.json("GET", ME);
    expect(denial(r)).toEqual({ status: 401, code: "not_authenticated", www: "Bearer" });
    expect(r.body).toEqual({ detail: expect.any(String), code: "not_authenticated" });
  });

  test("Authorization: Basic is refused", async () => {
    const r = await t.json("GET", ME, { headers: { authorization: "Basic x" } });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe("Bearer");
  });

  test("a bad Authorization header is not rescued by a valid cookie", async () => {
    const r = await t.json("GET", ME, { headers: { authorization: "Basic x" }, cookies: { svc_session: org.access_token } });
    expect(r.status).toBe(401);
  });

  test("an empty bearer is refused", async () => {
    for (const h of ["Bearer", "Bearer ", "Bearer  "]) {
      const r = await t.json("GET", ME, { headers: { authorization: h } });
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  test("refresh with neither body nor cookie: 401 not_authenticated", async () => {
    const r = await t.json("POST", REFRESH);
    expect(denial(r)).toEqual({ status: 401, code: "not_authenticated", www: "Bearer" });
  });
});

describe("the cache of verified tokens", () => {
  const tokens = () => {
    let now = Date.UTC(2030, 0, 1);
    const tk = createTokens("k".repeat(48), "r".repeat(48), () => now);
    return { tk, advance: (ms: number) => (now += ms), now: () => now };
  };
  const claims = (now: number, typ: "access" | "refresh") => ({
    sub: "u",
    tid: "t",
    sid: "s",
    typ,
    jti: "j",
    iat: Math.floor(now / 1000),
    exp: Math.floor(now / 1000) + 60,
  });

  test("a remembered token is still refused once expired, and for another type", async () => {
    const { tk, advance, now } = tokens();
    const access = await tk.sign(claims(now(), "access"));
    expect((await tk.verify(access, "access")).sub).toBe("u");
    expect((await tk.verify(access, "access")).sub).toBe("u");
    await expect(tk.verify(access, "refresh")).rejects.toMatchObject({ code: "token_invalid" });
    advance(60_000);
    await expect(tk.verify(access, "access")).rejects.toMatchObject({ code: "token_expired" });
  });

  test("a token differing from a remembered one by its signature alone is checked in full", async () => {
    const { tk, now } = tokens();
    const access = await tk.sign(claims(now(), "access"));
    await tk.verify(access, "access");
    const [h, p, sig] = access.split(".");
    const flipped = `${h}.${p}.${sig!.slice(0, -2)}${sig!.endsWith("AA") ? "BA" : "AA"}`;
    await expect(tk.verify(flipped, "access")).rejects.toMatchObject({ code: "token_invalid" });
  });
});
