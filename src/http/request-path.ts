/**
 * The path of a request, without its query, read from `request.url` as text. Bun hands over a
 * bare path ("/api/v1/health") when the Host header is missing, empty or not a host (`a b`,
 * `x:99999999`), and `new URL` throws on that: a request's URL is never parsed with it.
 */
export function requestPath(url: string): string {
  let start = 0;
  if (!url.startsWith("/")) {
    const scheme = url.indexOf("://");
    start = scheme === -1 ? 0 : url.indexOf("/", scheme + 3);
    if (start === -1) return "/";
  }
  let end = url.length;
  for (const mark of ["?", "#"]) {
    const at = url.indexOf(mark, start);
    if (at !== -1 && at < end) end = at;
  }
  const path = url.slice(start, end) || "/";
  // A bare target that is not a path (`api/v1/x`, `\api\v1\x`) is still logged and routed as one.
  return path === "*" || path.startsWith("/") ? path : `/${path}`;
}
