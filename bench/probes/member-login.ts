import type { Db } from "../../src/db/database";

/**
 * The in-process benches' signed-in member: the first member of `bigco` (alphabetically) signs in
 * through the app, as a browser would, and the access token comes back.
 */
export async function benchMemberToken(app: { handle(r: Request): Promise<Response> }, db: Db, password: string): Promise<string> {
  const member = db
    .query("SELECT u.email FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE t.subdomain = 'bigco' AND u.role = 'member' ORDER BY u.email LIMIT 1")
    .get() as { email: string };
  const login = await app.handle(
    new Request("http://localhost/api/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json", "x-tenant": "bigco" },
      body: JSON.stringify({ email: member.email, password }),
    }),
  );
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  return ((await login.json()) as { access_token: string }).access_token;
}
