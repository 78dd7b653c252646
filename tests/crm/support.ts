import { type TestApp, testApp } from "../helpers";

export const CRM = "/api/v1/crm";

/** A signed-up organization and shorthand for its CRM calls. */
export async function crmOrg(t: TestApp, subdomain?: string, extra: Record<string, unknown> = {}) {
  const org = await t.signup(subdomain, extra);
  const token = org.access_token;
  const call = (method: string, path: string, body?: unknown) => t.json(method, `${CRM}${path}`, { token, body });
  const ok = async (method: string, path: string, body?: unknown, status = method === "POST" ? 201 : 200) => {
    const r = await call(method, path, body);
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return {
    ...org,
    token,
    call,
    ok,
    account: (name: string, more: Record<string, unknown> = {}) => ok("POST", "/accounts", { name, ...more }),
    contact: (first_name: string, last_name: string | null, more: Record<string, unknown> = {}) =>
      ok("POST", "/contacts", { first_name, last_name, ...more }),
    deal: (body: Record<string, unknown>) => ok("POST", "/deals", body),
    list: (query = "") => ok("GET", `/deals${query ? `?${query}` : ""}`),
  };
}

export type CrmOrg = Awaited<ReturnType<typeof crmOrg>>;

/** A fresh app; each test file closes its own. */
export const crmApp = () => testApp();
