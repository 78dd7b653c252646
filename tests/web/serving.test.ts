import { afterAll, describe, expect, test } from "bun:test";
import { CSP } from "../../src/web/routes";
import { testApp } from "../helpers";

// The web app served beside the API (issue 14): the page on every client route, hashed assets
// cached for a year and sent precompressed, the API's JSON answers untouched.
const t = testApp();
afterAll(() => t.close());

// What a browser's navigation sends.
const ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const page = (path: string, host = "acme.localhost") => t.request("GET", path, { headers: { host, accept: ACCEPT } });

describe("the app's page", () => {
  for (const path of ["/", "/deals", "/settings/security", "/magic-link", "/accept-invitation", "/sign-in", "/team"]) {
    test(`${path} answers the HTML with CSP and no-cache`, async () => {
      const res = await page(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-security-policy")).toBe(CSP);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("same-origin");
      const html = await res.text();
      expect(html).toContain('<div id="app"></div>');
      // No inline script: every <script> has a src on this host.
      for (const m of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
        expect(m[1]).toMatch(/src="\/assets\/[^"]+\.js"/);
        expect(m[2]!.trim()).toBe("");
      }
    });
  }

  test("the base domain's root is the same page, told the server's settings", async () => {
    const res = await page("/", "localhost");
    expect(res.status).toBe(200);
    const html = await res.text();
    const meta = /<meta name="suite-config" content="([^"]*)">/.exec(html)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&");
    expect(JSON.parse(meta)).toEqual({ baseDomain: "localhost", sharedCookies: false, smtp: false, signup: "open" });
  });
});

describe("assets", () => {
  const assetPaths = async () => [...(await (await page("/")).text()).matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);

  test("the page loads one script and one stylesheet, hashed", async () => {
    const paths = await assetPaths();
    expect(paths.some((p) => /\/assets\/[\w-]+-[a-z0-9]{6,}\.js$/.test(p))).toBe(true);
    expect(paths.some((p) => /\/assets\/[\w-]+-[a-z0-9]{6,}\.css$/.test(p))).toBe(true);
  });

  test("sent brotli, gzip or plain as accepted, cached for a year", async () => {
    for (const path of await assetPaths()) {
      const plain = await t.request("GET", path, { headers: { "accept-encoding": "identity" } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("vary")).toBe("Accept-Encoding");
      expect(plain.headers.get("content-encoding")).toBeNull();
      const body = new Uint8Array(await plain.arrayBuffer());

      const gz = await t.request("GET", path, { headers: { "accept-encoding": "gzip" } });
      expect(gz.headers.get("content-encoding")).toBe("gzip");
      const gzBytes = new Uint8Array(await gz.arrayBuffer());
      expect(gzBytes.length).toBeLessThan(body.length);
      expect(Bun.gunzipSync(gzBytes)).toEqual(body);

      const br = await t.request("GET", path, { headers: { "accept-encoding": "gzip, deflate, br" } });
      expect(br.headers.get("content-encoding")).toBe("br");
      const { brotliDecompressSync } = await import("node:zlib");
      expect(new Uint8Array(brotliDecompressSync(new Uint8Array(await br.arrayBuffer())))).toEqual(body);
    }
  });

  test("an unknown asset is a plain 404", async () => {
    const res = await t.request("GET", "/assets/nope-12345678.js");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toStartWith("text/plain");
  });
});

describe("the API is untouched", () => {
  test("an unknown API path stays the JSON 404, no-store, even asked for HTML", async () => {
    for (const path of ["/api/v1/nope", "/api/v1/", "/api", "/api/v2/deals"]) {
      const res = await t.json("GET", path, { headers: { host: "acme.localhost", accept: ACCEPT } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: "Not found.", code: "not_found" });
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });

  test("a client that does not ask for HTML keeps the JSON 404 outside /api/v1", async () => {
    for (const path of ["/", "/health", "/deals"]) {
      const res = await t.json("GET", path, { headers: { accept: "application/json" } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: "Not found.", code: "not_found" });
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });

  test("API answers keep no-store", async () => {
    const res = await t.request("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "ok" });
  });
});
