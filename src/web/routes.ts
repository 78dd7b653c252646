import { Elysia } from "elysia";
import type { Context } from "../context";
import { errors } from "../kernel/errors";
import { requestPath } from "../http/request-path";
import type { WebAsset } from "./build";
import { webBundle } from "./bundle";

/** No inline script, nothing from another host, no framing (issue 14). */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const HTML_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-cache",
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  // Not "no-referrer": a same-origin fetch under it sends `Origin: null`, which the CSRF check refuses.
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

function sendAsset(a: WebAsset, acceptEncoding: string): Response {
  const headers: Record<string, string> = {
    "content-type": a.type,
    "cache-control": "public, max-age=31536000, immutable",
    vary: "Accept-Encoding",
    "x-content-type-options": "nosniff",
  };
  if (/\bbr\b/.test(acceptEncoding)) return new Response(a.br, { headers: { ...headers, "content-encoding": "br" } });
  if (/\bgzip\b/.test(acceptEncoding)) return new Response(a.gzip, { headers: { ...headers, "content-encoding": "gzip" } });
  return new Response(a.body, { headers });
}

const isApi = (path: string) => path === "/api" || path.startsWith("/api/");
/** A browser opening a page asks for HTML; an API client that strays outside /api/v1 keeps its JSON 404. */
const wantsPage = (request: Request) => (request.headers.get("accept") ?? "").includes("text/html");

/**
 * The web app, mounted after every API route: hashed assets under /assets, and the app's page for
 * every other GET that asks for HTML (the base domain's public page and every client route of
 * an organization's host). Unknown /api paths, and requests that do not ask for a page, keep the
 * JSON 404 of docs/interface.md#errors (with its no-store: the page and assets set their own Cache-Control).
 */
export const webRoutes = (ctx: Context) => {
  // What the page needs to know about this server, in a <meta> (the CSP forbids inline script).
  const meta = escapeAttr(
    JSON.stringify({ baseDomain: ctx.config.baseDomain, sharedCookies: ctx.config.cookieDomain !== null, smtp: ctx.config.smtpUrl !== null, signup: ctx.config.signup }),
  );
  let page: string | undefined;
  const html = async () => {
    page ??= (await webBundle()).html.replace('<meta name="suite-config" content="">', `<meta name="suite-config" content="${meta}">`);
    return new Response(page, { headers: HTML_HEADERS });
  };
  return new Elysia({ name: "web", seed: ctx.id })
    .get("/assets/*", async ({ request }) => {
      const a = (await webBundle()).assets.get(requestPath(request.url));
      if (!a) return new Response("Not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-cache" } });
      return sendAsset(a, request.headers.get("accept-encoding") ?? "");
    })
    .get("/*", ({ request }) => {
      if (isApi(requestPath(request.url)) || !wantsPage(request)) throw errors.notFound();
      return html();
    });
};
