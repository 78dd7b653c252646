// The essentials of deploy/ read from the files themselves (CI also runs systemd-analyze verify,
// caddy validate and nginx -t on them): the unit's sandbox, and proxies that pass on what the
// server relies on (the Host that names the organization, the client's address last in
// X-Forwarded-For, a body big enough for a CSV import, an export streamed unbuffered).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { requestInfo } from "../../src/http/client";
import { MAX_IMPORT_BYTES } from "../../src/http/body";

const DEPLOY = join(import.meta.dir, "..", "..", "deploy");
const read = (name: string) => readFileSync(join(DEPLOY, name), "utf8");
/** The unit's settings, comments dropped: key → every value it is given, in order. */
function unitSettings(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";") || line.startsWith("[")) continue;
    const eq = line.indexOf("=");
    const key = line.slice(0, eq);
    out.set(key, [...(out.get(key) ?? []), line.slice(eq + 1)]);
  }
  return out;
}
const uncommented = (text: string) =>
  text
    .split("\n")
    .map((l) => l.replace(/(^|\s)#.*$/, "").replace(/\s+/g, " ").trim())
    .filter(Boolean)
    .join("\n");
const MB = 1024 * 1024;

describe("deploy/suite.service", () => {
  const unit = unitSettings(read("suite.service"));
  const one = (key: string) => unit.get(key)?.at(-1);

  test("runs as a user of its own, with no way to gain privileges", () => {
    expect(one("DynamicUser") === "yes" || /^\w+$/.test(one("User") ?? "")).toBe(true);
    expect(one("User")).not.toBe("root");
    expect(one("NoNewPrivileges")).toBe("yes");
    expect(one("CapabilityBoundingSet")).toBe("");
    expect(one("AmbientCapabilities") ?? "").toBe("");
  });

  test("sees the system read-only and writes only its state directory, 0700", () => {
    expect(one("ProtectSystem")).toBe("strict");
    expect(one("ProtectHome")).toBe("yes");
    expect(one("PrivateTmp")).toBe("yes");
    expect(one("StateDirectory")).toBe("suite");
    expect(one("StateDirectoryMode")).toBe("0700");
    expect(one("ExecStart")).toContain("--db /var/lib/suite/");
  });

  test("limits sockets and system calls, and leaves the JIT its writable-executable memory", () => {
    expect(one("RestrictAddressFamilies")?.split(/\s+/).sort()).toEqual(["AF_INET", "AF_INET6", "AF_UNIX"]);
    expect(one("SystemCallFilter")).toBe("@system-service");
    // JavaScriptCore maps its JIT region PROT_READ|PROT_WRITE|PROT_EXEC: this would kill the server.
    expect(unit.has("MemoryDenyWriteExecute")).toBe(false);
  });

  test("reads its keys from a file, restarts on failure, listens on loopback behind the proxy", () => {
    expect(one("EnvironmentFile")).toMatch(/^-?\/etc\/suite\/suite\.env$/);
    expect(one("Restart")).toBe("on-failure");
    expect(one("ExecStart")).toMatch(/ serve .*--host 127\.0\.0\.1 --port 8000\b/);
    expect(unit.get("Environment")).toContain("SUITE_TRUST_PROXY=true");
  });
});

describe("reverse proxies", () => {
  const caddy = uncommented(read("Caddyfile"));
  const nginx = uncommented(read("nginx.conf"));

  test("Caddy serves the base domain and every subdomain, to the server's port", () => {
    expect(caddy).toMatch(/^suite\.example\.com \{/m);
    expect(caddy).toMatch(/^\*\.suite\.example\.com \{/m);
    expect(caddy).toContain("reverse_proxy 127.0.0.1:8000");
    expect(caddy).toContain("header_up Host {host}");
    expect(caddy).toContain("flush_interval -1");
    const size = caddy.match(/max_size (\d+)MB/);
    expect(Number(size?.[1]) * 1000 * 1000).toBeGreaterThan(MAX_IMPORT_BYTES);
  });

  test("Caddy asks the server before each on-demand certificate, directly on loopback", () => {
    expect(caddy).toMatch(/on_demand_tls \{\nask http:\/\/127\.0\.0\.1:8000\/api\/v1\/tls\/ask\n\}/);
    expect(caddy).toMatch(/^\*\.suite\.example\.com \{\ntls \{\non_demand\n\}/m);
  });

  test("nginx serves both names over TLS and passes Host, the client address and the scheme", () => {
    expect(nginx).toContain("server_name suite.example.com *.suite.example.com;");
    expect(nginx).toMatch(/listen 443 ssl/);
    expect(nginx).toMatch(/ssl_certificate \/etc\/letsencrypt\/live\/suite\.example\.com\/fullchain\.pem;/);
    expect(nginx).toContain("server 127.0.0.1:8000;");
    expect(nginx).toContain("proxy_set_header Host $host;");
    expect(nginx).toContain("proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;");
    expect(nginx).toContain("proxy_set_header X-Forwarded-Proto $scheme;");
    expect(nginx).toContain("proxy_buffering off;");
    const size = nginx.match(/client_max_body_size (\d+)m;/);
    expect(Number(size?.[1]) * MB).toBeGreaterThan(MAX_IMPORT_BYTES);
  });

  test("the address nginx appends is the one the server takes, whatever the client sent before it", () => {
    // $proxy_add_x_forwarded_for = the client's own header, then ", $remote_addr".
    const forwarded = new Request("http://acme.suite.example.com/api/v1/health", { headers: { "x-forwarded-for": "10.0.0.1, 203.0.113.7" } });
    const socket = { requestIP: () => ({ address: "127.0.0.1" }) };
    expect(requestInfo(forwarded, socket, true).ip).toBe("203.0.113.7");
    expect(requestInfo(forwarded, socket, false).ip).toBe("127.0.0.1");
  });
});
