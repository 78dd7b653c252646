import type { TestApp } from "../../helpers";
import { testSql } from "../../support/sql";

export const MAGIC_LINK = "/api/v1/auth/magic-link";
export const MAGIC_VERIFY = "/api/v1/auth/magic-verify";
export const ACCEPTED = { detail: "If that address has an account, a sign-in link is on its way." };

/** Asks for a link and waits until the (background) issue has committed. */
export async function askLink(t: TestApp, email: string, o: { tenant?: string; headers?: Record<string, string> } = {}) {
  const r = await t.json("POST", MAGIC_LINK, { body: { email }, ...o });
  await t.ctx.magicLinks.settled();
  return r;
}

/** The sign-in links waiting in the outbox, newest first (no SMTP in these tests: they stay pending; signup's verification mail is left out). */
export async function outboxLinks(t: TestApp): Promise<string[]> {
  return (await t.ctx.repos.mail.list()).filter((r) => r.kind === "magic_link").map((r) => r.link).filter((l): l is string => l !== null);
}

export const tokenOf = (link: string): string => decodeURIComponent(new URL(link).hash.replace(/^#token=/, ""));

/** The token of the newest mailed link. */
export async function newestToken(t: TestApp): Promise<string> {
  const [link] = await outboxLinks(t);
  if (!link) throw new Error("no link in the outbox");
  return tokenOf(link);
}

export const verifyToken = (t: TestApp, token: unknown, o: { tenant?: string; headers?: Record<string, string> } = {}) =>
  t.json("POST", MAGIC_VERIFY, { body: { token }, ...o });

export const countRows = async (t: TestApp, table: string): Promise<number> =>
  (await testSql(t.ctx).get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n;
