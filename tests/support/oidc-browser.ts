import type { TestApp } from "../helpers";
import { noteSecret } from "../security/ledger";

/**
 * A browser for the identity-provider round trips: one cookie jar per host, redirects followed
 * by hand. The app is called in-process (TestApp.request with the organization's Host); the
 * identity provider over loopback HTTP.
 */
export class OidcBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  constructor(private readonly t: TestApp) {}

  private jar(host: string): Map<string, string> {
    let jar = this.jars.get(host);
    if (!jar) this.jars.set(host, (jar = new Map()));
    return jar;
  }

  private keep(host: string, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(";")[0]!;
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      noteSecret("cookie", value);
      if (value === "" || /max-age=0/i.test(line)) this.jar(host).delete(name);
      else this.jar(host).set(name, value);
    }
  }

  /** Cookies this browser holds for an organization's host. */
  cookies(subdomain: string): Record<string, string> {
    return Object.fromEntries(this.jar(`${subdomain}.localhost`));
  }

  /** Forgets one cookie (a browser that never had it). */
  drop(subdomain: string, name: string): void {
    this.jar(`${subdomain}.localhost`).delete(name);
  }

  /** A request to the app on `subdomain`'s host, with this browser's cookies for it. */
  async app(method: string, path: string, subdomain: string, o: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
    const host = `${subdomain}.localhost`;
    const headers = { ...o.headers };
    if (method !== "GET") Object.assign(headers, { origin: `http://${host}:8000`, "sec-fetch-site": "same-origin" });
    const res = await this.t.request(method, path, { tenant: subdomain, cookies: this.cookies(subdomain), body: o.body, headers });
    this.keep(host, res);
    return res;
  }

  /** A request to the identity provider (or a stand-in) with this browser's cookies for its host. */
  async remote(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const u = new URL(url);
    const cookie = [...this.jar(u.host)].map(([k, v]) => `${k}=${v}`).join("; ");
    const headers: Record<string, string> = cookie ? { cookie } : {};
    let body: string | undefined;
    if (init.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(url, { method: init.method ?? "GET", headers, body, redirect: "manual" });
    this.keep(u.host, res);
    return res;
  }

  /**
   * Follows the provider's redirects from `authorizationUrl`, signing in as `account` at its
   * login form when it asks, until it sends the browser back to the app: that callback URL.
   */
  async authorize(authorizationUrl: string, account: string): Promise<URL> {
    let url = authorizationUrl;
    for (let hop = 0; hop < 10; hop++) {
      const u = new URL(url);
      if (u.hostname.endsWith(".localhost")) {
        for (const [k, v] of u.searchParams) if (k === "code" || k === "state") noteSecret(`oauth ${k}`, v);
        return u;
      }
      const res = u.pathname.startsWith("/interaction/") ? await this.remote(url, { method: "POST", form: { prompt: "login", login: account } }) : await this.remote(url);
      const location = res.headers.get("location");
      if (!location) throw new Error(`the provider stopped at ${u.pathname} with ${res.status}: ${(await res.text()).slice(0, 300)}`);
      url = new URL(location, url).href;
    }
    throw new Error("too many redirects at the provider");
  }

  /** The app path (with query) of a callback URL. */
  static pathOf(url: URL): string {
    return `${url.pathname}${url.search}`;
  }
}
