import { describe, expect, test } from "bun:test";
import { noteResponseSecrets, searchLogs, snapshotSecrets } from "./ledger";

// The whole-run check (tests/preload.ts) is only as good as this search: it must find a secret
// however it is logged, and not cry wolf over numbers that merely contain a code.
const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSIsImp0aSI6Ijk4NzYifQ.kP3vJzq0d3l9mC2f8YH1n0sJt4rWq7xVb6uE5aZc1oM";
const TENANT = "Tnt0rgan1zat10n1d_AbC";
const SECRET = "S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tX";
const LINK_SECRET = "L1nkS3cr3tL1nkS3cr3tL1nkS3cr3tL1nkS3cr3tL1n";
const secrets = new Map([
  [jwt, "access token"],
  ["Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg", "refresh token"],
  ["correct horse battery", "password"],
  ["https://acme.example/magic-link#token=T0k3nT0k3nT0k3nT0k3nT0k3nT0k3n", "mailed link"],
  ["482913", "code"],
  ["abcd-ef12", "backup code"],
  // Tokens that name their organization (`<tenant id>.<secret>`), as a request field and inside a link.
  [`${TENANT}.${SECRET}`, "magic token"],
  [`https://acme.example/reset-password#token=${TENANT}.${LINK_SECRET}`, "mailed link"],
]);
const found = (line: string) => searchLogs([line], secrets).hits.map((h) => h.split(" (")[0]);

describe("the secrets ledger's search", () => {
  test("finds each kind of secret however it is written into a log line", () => {
    expect(found(JSON.stringify({ auth: `Bearer ${jwt}` }))).toEqual(["access token"]);
    expect(found(`cookie: svc_session=x.${jwt.split(".")[2]}; Path=/`)).toEqual(["access token"]);
    expect(found(JSON.stringify({ refresh: "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg" }))).toEqual(["refresh token"]);
    expect(found("login failed for password correct horse battery")).toEqual(["password"]);
    expect(found('{"url":"/magic-link?t=T0k3nT0k3nT0k3nT0k3nT0k3nT0k3n"}')).toEqual(["mailed link"]);
    expect(found('{"code":"482913"}')).toEqual(["code"]);
    expect(found("used abcd-ef12 today")).toEqual(["backup code"]);
    expect(found(JSON.stringify({ body: { token: `${TENANT}.${SECRET}` } }))).toEqual(["magic token"]);
    expect(found(`token part ${SECRET} alone`)).toEqual(["magic token"]);
    expect(found(`/reset-password#token=${TENANT}.${LINK_SECRET}`)).toEqual(["mailed link"]);
    expect(found(JSON.stringify({ secret: LINK_SECRET }))).toEqual(["mailed link"]);
  });

  test("an organization's id, the public part of a token that names it, is no secret", () => {
    expect(found(JSON.stringify({ msg: "request", tenant_id: TENANT, status: 200 }))).toEqual([]);
  });

  test("notes a webhook signing secret from an answer, and finds it logged whole or without its whsec_ prefix", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+fg7Nk0N/Zo=";
    const noted = new Map<string, string>();
    const before = snapshotSecrets();
    noteResponseSecrets({ id: "w1", secret });
    for (const [v, k] of snapshotSecrets()) if (!before.has(v)) noted.set(v, k);
    expect([...noted.keys()].sort()).toEqual([secret, secret.slice(6)].sort());
    const hits = (line: string) => searchLogs([line], noted).hits.length;
    expect(hits(JSON.stringify({ secret }))).toBeGreaterThan(0);
    expect(hits(`signing with ${secret.slice(6)}`)).toBeGreaterThan(0);
    expect(hits(JSON.stringify({ msg: "webhook endpoint disabled", webhook_id: "w1" }))).toBe(0);
  });

  test("does not take a number or text that merely contains a secret for the secret", () => {
    expect(found('{"duration_ms":0.482913,"time":1764482913000,"id":"x482913y"}')).toEqual([]);
    expect(found('{"msg":"request","path":"/api/v1/auth/login","status":401}')).toEqual([]);
  });
});
