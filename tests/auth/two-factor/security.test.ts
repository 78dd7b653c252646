import { afterAll, describe, expect, test } from "bun:test";
import { createSecretBox } from "../../../src/security/secret-box";
import { hashToken } from "../../../src/kernel/ids";
import { type TestApp, testApp } from "../../helpers";
import { ME, allAudit, claimsOf, clock as makeClock, forge, login } from "../support";
import { appCode, base32Decode } from "./rfc6238";
import { CONFIRM, DISABLE, NEXT_MINUTE, SETUP, STEP_MS, VERIFY, challenge, enable, orgWithClock, verify } from "./support";
import { testSql } from "../../support/sql";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});

async function enabledOrg(subdomain = "acme") {
  const o = await orgWithClock(apps, subdomain);
  const factor = await enable(o.t, o.org.access_token);
  o.clock.advance(NEXT_MINUTE);
  return { ...o, ...factor };
}

describe("what is stored", () => {
  test("the TOTP secret only sealed (AES-256-GCM under the server key), backup codes only as keyed hashes", async () => {
    const { t, org, secret, backupCodes } = await enabledOrg();
    const row = (await testSql(t.ctx).get("SELECT * FROM user_totp")) as Record<string, unknown>;
    const sealed = String(row.secret_enc);
    const raw = base32Decode(secret);
    for (const plain of [secret, secret.toLowerCase(), raw.toString("hex"), raw.toString("base64"), raw.toString("base64url")]) {
      expect(sealed).not.toContain(plain);
    }
    expect(sealed).toStartWith("v1.");
    const key = t.ctx.keys.encryptionKey;
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(createSecretBox(key).open(sealed, org.user.id)).toBe(secret);
    expect(() => createSecretBox("another key of at least thirty-two characters").open(sealed, org.user.id)).toThrow();

    const hashes = (await testSql(t.ctx).all<{ code_hash: string }>("SELECT code_hash FROM backup_codes")).map((r) => r.code_hash);
    expect(hashes).toHaveLength(10);
    const dump = JSON.stringify((await testSql(t.ctx).all("SELECT * FROM backup_codes")));
    for (const c of backupCodes) {
      expect(dump).not.toContain(c);
      expect(dump).not.toContain(c.replace("-", ""));
      // Not an unkeyed hash either: a guess could be tested against that without the server.
      for (const text of [c, c.replace("-", ""), `${org.user.id}:${c.replace("-", "")}`]) {
        expect(hashes).not.toContain(new Bun.CryptoHasher("sha256").update(text).digest("hex"));
      }
    }
  });

  test("SUITE_ENCRYPTION_KEY, when set, is the key (and none is generated)", async () => {
    const key = "k".repeat(40);
    const t = testApp({ env: { SUITE_ENCRYPTION_KEY: key }, now: makeClock().now });
    apps.push(t);
    const org = await t.signup("acme");
    const { secret } = (await t.json("POST", SETUP, { token: org.access_token })).body;
    const { secret_enc } = (await testSql(t.ctx).get("SELECT secret_enc FROM user_totp")) as { secret_enc: string };
    expect(createSecretBox(key).open(secret_enc, org.user.id)).toBe(secret);
    expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM settings WHERE key = 'encryption_key'")).toEqual({ n: 0 });
  });

  test("a sealed secret does not open for another user (bound to its owner)", () => {
    const box = createSecretBox("x".repeat(32));
    const sealed = box.seal("JBSWY3DPEHPK3PXP", "user-a");
    expect(box.open(sealed, "user-a")).toBe("JBSWY3DPEHPK3PXP");
    expect(() => box.open(sealed, "user-b")).toThrow();
    expect(box.seal("JBSWY3DPEHPK3PXP", "user-a")).not.toBe(sealed);
  });

  test("no secret, code, backup code or temp_token in an audit row, a log line or an error body", async () => {
    const { t, clock, org, secret, backupCodes } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    const wrong = await verify(t, temp, "000000");
    const used = appCode(secret, clock.now());
    await verify(t, temp, used);
    const regenerated = (await t.json("POST", "/api/v1/auth/2fa/backup-codes", { token: org.access_token })).body.backup_codes as string[];
    clock.advance(STEP_MS);
    const disableCode = appCode(secret, clock.now());
    await t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code: disableCode } });
    const text = JSON.stringify([(await allAudit(t)), t.logs, wrong.body]);
    for (const s of [secret, temp, used, disableCode, org.password, ...backupCodes, ...regenerated]) expect(text).not.toContain(s);
    const failure = (await allAudit(t)).find((a) => a.action === "2fa.failure")!;
    expect(JSON.parse(failure.detail as string)).toEqual({ during: "verify", reason: "wrong_code" });
  });
});

describe("temp_token", () => {
  test("is refused when expired, tampered, of another type, or signed by another key", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    const code = () => appCode(secret, clock.now());
    const tampered = `${temp.slice(0, -4)}${temp.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`;
    const wrongKey = await forge(t, temp, { typ: "2fa" }, {}, new TextEncoder().encode("z".repeat(48)));
    for (const bad of [tampered, org.access_token, org.refresh_token, wrongKey, "not-a-jwt"]) {
      const r = await verify(t, bad, code());
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 401, code: "invalid_temp_token" });
    }
    clock.advance(301_000);
    expect(await verify(t, temp, code())).toMatchObject({ status: 401, body: { code: "invalid_temp_token" } });
    // A fresh one (the lifetime is SUITE_TEMP_TOKEN_TTL, 300 s) still works.
    expect((await verify(t, await challenge(t, org.email, org.password), code())).status).toBe(200);
  });

  test("is not an access token, and opens no session", async () => {
    const { t, org } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    for (const r of [await t.json("GET", ME, { token: temp }), await t.json("GET", ME, { cookies: { svc_session: temp } })]) {
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 401, code: "token_invalid" });
    }
    const { sid } = claimsOf(temp);
    // Its sid names a challenge row, never a session (neither as public id nor as a hashed secret one).
    expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM sessions WHERE id = ?1 OR sid_hash = ?2", sid as string, hashToken(sid as string))).toEqual({ n: 0 });
    expect(await testSql(t.ctx).get("SELECT user_id, method FROM sign_in_challenges WHERE id = ?1", sid as string)).toEqual({ user_id: org.user.id, method: "password" });
  });

  test("of one organization is refused on another organization's host (403 tenant_mismatch)", async () => {
    const { t, clock, org, secret } = await enabledOrg("acme");
    await t.signup("globex");
    const temp = await challenge(t, org.email, org.password);
    const code = appCode(secret, clock.now());
    for (const headers of [{ host: "globex.localhost" }, { "x-tenant": "globex" }] as Array<Record<string, string>>) {
      const r = await verify(t, temp, code, headers);
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: "tenant_mismatch" });
    }
    // Nothing was spent: the same code still works on its own host.
    expect((await verify(t, temp, code, { host: "acme.localhost" })).status).toBe(200);
  });

  test("login on the organization's host answers the challenge too", async () => {
    const { t, org } = await enabledOrg();
    const r = await login(t, org.email, org.password, { "x-tenant": "acme" });
    expect(r.body.requires_2fa).toBe(true);
    expect(r.res.headers.getSetCookie()).toEqual([]);
  });
});

describe("request bodies", () => {
  test("422 items for codes of the wrong shape, missing fields and wrong types; the code is never echoed", async () => {
    const { t, org } = await enabledOrg();
    const token = org.access_token;
    const items = async (path: string, body: unknown, auth = true) => {
      const r = await t.json("POST", path, { token: auth ? token : undefined, body });
      expect(r.status).toBe(422);
      return (r.body.detail as Array<Record<string, unknown>>).map(({ loc, type, input }) => ({ loc, type, input }));
    };
    expect(await items(CONFIRM, { code: "12345" })).toEqual([{ loc: ["body", "code"], type: "string_pattern_mismatch", input: undefined }]);
    expect(await items(CONFIRM, { code: "1234567" })).toEqual([{ loc: ["body", "code"], type: "string_pattern_mismatch", input: undefined }]);
    expect(await items(CONFIRM, { code: "abcd-efgh" })).toEqual([{ loc: ["body", "code"], type: "string_pattern_mismatch", input: undefined }]);
    expect(await items(CONFIRM, { code: 123456 })).toEqual([{ loc: ["body", "code"], type: "string_type", input: undefined }]);
    expect(await items(CONFIRM, {})).toEqual([{ loc: ["body", "code"], type: "missing", input: undefined }]);
    expect(await items(VERIFY, { code: "12a456" }, false)).toEqual([
      { loc: ["body", "temp_token"], type: "missing", input: undefined },
      { loc: ["body", "code"], type: "string_pattern_mismatch", input: undefined },
    ]);
    expect(await items(DISABLE, { code: "123456" })).toEqual([{ loc: ["body", "password"], type: "missing", input: undefined }]);
    expect(await items(SETUP, { revoke_other_sessions: "maybe" })).toEqual([
      { loc: ["body", "revoke_other_sessions"], type: "bool_parsing", input: "maybe" },
    ]);
    const noJson = await t.json("POST", CONFIRM, { token, raw: "{", headers: { "content-type": "application/json" } });
    expect(noJson.body.detail[0].type).toBe("json_invalid");
  });

  test("a code typed with spaces, as apps show it, is accepted", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const c = appCode(secret, clock.now());
    expect((await verify(t, await challenge(t, org.email, org.password), `${c.slice(0, 3)} ${c.slice(3)}`)).status).toBe(200);
  });
});
