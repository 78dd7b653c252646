import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { join } from "node:path";

/**
 * Bundles the web app (web/index.html and everything it imports) with Bun's bundler: production
 * define (Preact outside development mode), minified, hashed asset names, each asset compressed
 * with gzip and brotli once. `bun run build` writes the result beside the binary's sources and
 * embeds it; `bun src/main.ts serve` builds it in memory on the first page request.
 */

export interface WebAsset {
  /** URL path, e.g. /assets/index-1b57mz26.js */
  path: string;
  type: string;
  body: Uint8Array;
  gzip: Uint8Array;
  br: Uint8Array;
}

export interface WebBundle {
  html: string;
  assets: Map<string, WebAsset>;
}

/** The app's first page load may fetch at most this much JS + CSS, gzipped (issue 14). */
export const FIRST_LOAD_BUDGET = 100 * 1024;

export const WEB_ENTRY = join(import.meta.dir, "..", "..", "web", "index.html");

export function compress(body: Uint8Array): { gzip: Uint8Array; br: Uint8Array } {
  return {
    gzip: new Uint8Array(gzipSync(body, { level: 9 })),
    br: new Uint8Array(brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })),
  };
}

export async function buildWebBundle(entry = WEB_ENTRY): Promise<WebBundle> {
  const result = await Bun.build({
    entrypoints: [entry],
    target: "browser",
    minify: true,
    // Lazily imported screens (the operator console) become chunks of their own, outside the first load.
    splitting: true,
    define: { "process.env.NODE_ENV": '"production"' },
    naming: { entry: "[name].[ext]", chunk: "assets/[name]-[hash].[ext]", asset: "assets/[name]-[hash].[ext]" },
    publicPath: "/",
  });
  if (!result.success) throw new Error(`web bundle failed: ${result.logs.map(String).join("\n")}`);
  let html = "";
  const assets = new Map<string, WebAsset>();
  for (const out of result.outputs) {
    const body = new Uint8Array(await out.arrayBuffer());
    const path = out.path.replace(/^\./, "");
    if (path.endsWith(".html")) html = new TextDecoder().decode(body);
    else assets.set(path, { path, type: out.type, body, ...compress(body) });
  }
  if (!html) throw new Error("web bundle has no index.html");
  return { html, assets };
}

/** The JS and CSS the HTML page loads up front (lazy chunks are not counted), gzipped. */
export function firstLoadBytes(b: WebBundle): { js: number; css: number; total: number } {
  let js = 0;
  let css = 0;
  for (const m of b.html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) {
    const a = b.assets.get(m[1]!);
    if (!a) continue;
    if (a.path.endsWith(".css")) css += a.gzip.length;
    else if (a.path.endsWith(".js")) js += a.gzip.length;
  }
  return { js, css, total: js + css };
}
