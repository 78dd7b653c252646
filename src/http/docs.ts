import { type AnyElysia, Elysia } from "elysia";
import pkg from "../../package.json";
import type { Context } from "../context";
import { type DocsAssetName, docsAssetFile } from "./docs-assets";
import { buildDocument } from "./openapi-document";
import { htmlHeaders } from "./security-headers";

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Workspace Suite API</title>
  <link rel="stylesheet" href="/api/v1/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui" data-url="/api/v1/openapi.json"></div>
  <script src="/api/v1/docs/swagger-ui-bundle.js"></script>
  <script src="/api/v1/docs/init.js"></script>
</body>
</html>
`;

/** The page's own script, a file rather than inline so that its CSP needs no 'unsafe-inline'. */
const INIT = `const root = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({ url: root.dataset.url, domNode: root, deepLinking: true });
`;

/**
 * Swagger UI needs its own script and stylesheet, `data:` images (its icons live in its CSS), and
 * fetch to this origin (the document, and "Try it out"). Nothing inline: React sets its styles
 * through the DOM, which style-src 'self' allows (checked in headless Chromium: the page renders
 * and "Try it out" runs with no CSP violation).
 */
const PAGE_HEADERS = htmlHeaders({ script: ["'self'"], style: ["'self'"], img: ["'self'", "data:"], connect: ["'self'"] });

/**
 * An asset served gzipped to browsers that accept it (every one) and plain otherwise: the binary
 * holds it gzipped (gunzipped once if ever asked plain), the source tree plain (gzipped once).
 */
function asset(name: DocsAssetName, type: string) {
  let plain: Uint8Array<ArrayBuffer> | undefined;
  let gzipped: Uint8Array<ArrayBuffer> | undefined;
  return async (request: Request) => {
    if (!plain && !gzipped) {
      const file = docsAssetFile(name);
      const bytes = new Uint8Array(await Bun.file(file.path).arrayBuffer());
      if (file.gzipped) gzipped = bytes;
      else plain = bytes;
    }
    const headers: Record<string, string> = { "content-type": type, "cache-control": "public, max-age=86400", vary: "accept-encoding" };
    if (/\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
      gzipped ??= new Uint8Array(Bun.gzipSync(plain!));
      return new Response(gzipped, { headers: { ...headers, "content-encoding": "gzip" } });
    }
    plain ??= new Uint8Array(Bun.gunzipSync(gzipped!));
    return new Response(plain, { headers });
  };
}

/**
 * GET /api/v1/openapi.json (generated from the routes of `app`, once) and GET /api/v1/docs, a
 * Swagger UI reference page whose assets are embedded: nothing is fetched from a CDN.
 */
export const docsRoutes = (ctx: Context, app: () => AnyElysia) => {
  let document: string | undefined;
  const js = asset("swagger-ui-bundle.js", "text/javascript; charset=utf-8");
  const css = asset("swagger-ui.css", "text/css; charset=utf-8");
  return new Elysia({ name: "docs", prefix: "/api/v1", seed: ctx.id })
    .get("/openapi.json", () => {
      document ??= JSON.stringify(buildDocument(app(), pkg.version));
      return new Response(document, { headers: { "content-type": "application/json" } });
    })
    .get("/docs", () => new Response(PAGE, { headers: PAGE_HEADERS }))
    .get("/docs/init.js", () => new Response(INIT, { headers: { "content-type": "text/javascript; charset=utf-8" } }))
    .get("/docs/swagger-ui-bundle.js", ({ request }) => js(request))
    .get("/docs/swagger-ui.css", ({ request }) => css(request));
};
