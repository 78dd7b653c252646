import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../../src/config";

describe("SUITE_ENCRYPTION_KEY", () => {
  test("optional; when given, at least 32 characters", () => {
    expect(loadConfig({}, {}).encryptionKey).toBeNull();
    const key = "e".repeat(32);
    expect(loadConfig({}, { SUITE_ENCRYPTION_KEY: key }).encryptionKey).toBe(key);
    expect(loadConfig({ "encryption-key": key }, {}).encryptionKey).toBe(key);
  });

  test("a short key stops the start with one line that names the setting, not the key", () => {
    const key = "short-secret-value";
    let error: unknown;
    try {
      loadConfig({}, { SUITE_ENCRYPTION_KEY: key });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain("SUITE_ENCRYPTION_KEY");
    expect(message).toMatch(/at least 32 characters/);
    expect(message).not.toContain(key);
    expect(message).not.toContain("\n");
  });
});
