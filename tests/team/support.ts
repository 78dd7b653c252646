import type { TestApp } from "../helpers";
import { newestMailTo, testSql } from "../support/sql";

export const INVITE = "/api/v1/users/invite";
export const INVITATIONS = "/api/v1/users/invitations";
export const ACCEPT = "/api/v1/auth/invitations/accept";
export const USERS = "/api/v1/users";
export const PASSWORD = "new member password";

export type Admin = Awaited<ReturnType<TestApp["signup"]>>;

/** POST /users/invite as `admin`, on their own tenant's host. */
export const invite = (t: TestApp, admin: Admin, body: Record<string, unknown>) =>
  t.json("POST", INVITE, { token: admin.access_token, tenant: admin.subdomain, body });

/** The newest outbox row written for `recipient`. */
export function lastMail(t: TestApp, recipient: string) {
  return newestMailTo<{ link: string; subject: string; text_body: string; html_body: string; kind: string; tenant_id: string }>(t.ctx, recipient);
}

/** The token the newest invitation mail to `recipient` carries, read from its link as the invitee would. */
export async function mailedToken(t: TestApp, recipient: string): Promise<string> {
  const mail = await lastMail(t, recipient);
  if (!mail) throw new Error(`no mail to ${recipient}`);
  const token = new URL(mail.link).hash.match(/token=([^&]+)/)?.[1];
  if (!token) throw new Error(`no token in ${mail.link}`);
  return decodeURIComponent(token);
}

/** Invites `email` and answers the mailed token. */
export async function invited(t: TestApp, admin: Admin, email: string, extra: Record<string, unknown> = {}) {
  const r = await invite(t, admin, { email, ...extra });
  if (r.status !== 201 && r.status !== 200) throw new Error(`invite failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { invitation: r.body, token: await mailedToken(t, email) };
}

/** POST /auth/invitations/accept. */
export const accept = (t: TestApp, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.json("POST", ACCEPT, { body, headers });

export const countRows = async (t: TestApp, sql: string, ...params: string[]) => (await testSql(t.ctx).get<{ n: number }>(sql, ...params))!.n;
