/**
 * Headers on every answer of the server (issue 13, 2g), errors and 404s included:
 * - nosniff: a JSON answer is never run as a script or rendered as HTML;
 * - framing refused twice (X-Frame-Options for old browsers, CSP frame-ancestors for new ones):
 *   no page of ours can be put under an attacker's clickjacking overlay;
 * - Referrer-Policy `same-origin`: nothing of a URL (a magic link's token) goes to another
 *   origin. `no-referrer` would be stricter, but under it browsers send `Origin: null` on a
 *   same-origin POST, which the CSRF check (docs/interface.md#csrf) must refuse.
 * A JSON answer is not a document, so its CSP allows nothing at all.
 */
export const securityHeaders: Readonly<Record<string, string>> = Object.freeze({
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
});

/** What an HTML page may load, beyond nothing; each list holds CSP source expressions. */
export interface HtmlSources {
  script?: string[];
  style?: string[];
  img?: string[];
  connect?: string[];
  font?: string[];
  /** Where the page's forms may post (default: nowhere). */
  form?: string[];
}

/**
 * The Content-Security-Policy of an HTML page: `default-src 'none'`, then only what the page
 * names (e.g. `htmlCsp({ script: ["'self'"], style: ["'self'"], connect: ["'self'"] })`).
 * Framing, <base> and plugins are always refused. No inline script: a page moves its scripts to
 * served files instead of weakening this with 'unsafe-inline'.
 */
export function htmlCsp(sources: HtmlSources = {}): string {
  const list = (name: string, values: string[] | undefined) => (values && values.length > 0 ? [`${name} ${values.join(" ")}`] : []);
  return [
    "default-src 'none'",
    ...list("script-src", sources.script),
    ...list("style-src", sources.style),
    ...list("img-src", sources.img),
    ...list("connect-src", sources.connect),
    ...list("font-src", sources.font),
    `form-action ${sources.form?.length ? sources.form.join(" ") : "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join("; ");
}

/** The headers of an HTML answer: the common ones with the page's own CSP. */
export const htmlHeaders = (sources: HtmlSources): Record<string, string> => ({
  ...securityHeaders,
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": htmlCsp(sources),
});
