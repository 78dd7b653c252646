import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../../src/config";
import { issuerProblem, verifiedEmail } from "../../../src/auth/sign-in-providers/protocol";
import { NO_PASSWORD } from "../../../src/auth/sign-in-providers/flow-service";

describe("what counts as a verified address, per provider", () => {
  test("Entra ID: only with the xms_edov claim; its email_verified-less `email` never counts", () => {
    expect(verifiedEmail("microsoft", { email: "a@corp.example" })).toBe(false);
    expect(verifiedEmail("microsoft", { email: "a@corp.example", email_verified: true })).toBe(false);
    expect(verifiedEmail("microsoft", { email: "a@corp.example", xms_edov: true })).toBe(true);
  });
  test("Google and OpenID Connect: email_verified true (or the string some providers send)", () => {
    expect(verifiedEmail("google", { email_verified: true })).toBe(true);
    expect(verifiedEmail("oidc", { email_verified: "true" })).toBe(true);
    expect(verifiedEmail("oidc", { email_verified: false })).toBe(false);
    expect(verifiedEmail("oidc", {})).toBe(false);
  });
});

describe("issuer URLs", () => {
  const production = loadConfig({}, {});
  const tests = loadConfig({}, { SUITE_OIDC_TEST_LOOPBACK: "true" });
  test("https only, without query, fragment or credentials", () => {
    expect(issuerProblem(production, "https://login.example.com")).toBeNull();
    expect(issuerProblem(production, "http://login.example.com")).toContain("https");
    expect(issuerProblem(production, "http://127.0.0.1:9")).toContain("https");
    expect(issuerProblem(production, "https://u:p@login.example.com")).not.toBeNull();
    expect(issuerProblem(production, "https://login.example.com/#x")).not.toBeNull();
    expect(issuerProblem(production, "javascript:alert(1)")).not.toBeNull();
  });
  test("the test-only switch allows http on loopback hosts, and nowhere else", () => {
    expect(issuerProblem(tests, "http://127.0.0.1:9")).toBeNull();
    expect(issuerProblem(tests, "http://localhost:9")).toBeNull();
    expect(issuerProblem(tests, "http://login.example.com")).toContain("https");
    expect(issuerProblem(tests, "http://10.0.0.1")).toContain("https");
  });
});

test("an account without a password: its hash is well formed, and no password matches it", async () => {
  expect(await Bun.password.verify("", NO_PASSWORD)).toBe(false);
  expect(await Bun.password.verify("AAAAAAAAAAAAAAAAAAAAAA", NO_PASSWORD)).toBe(false);
});
