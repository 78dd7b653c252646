import type { TestApp } from "../../helpers";

export const FORGOT = "/api/v1/auth/password/forgot";
export const RESET = "/api/v1/auth/password/reset";
export const CHANGE = "/api/v1/auth/password/change";
export const FORGOT_ACCEPTED = { detail: "If that address has an account, a link to choose a new password is on its way." };

/** Asks for a reset link and waits until the (background) issue has committed. */
export async function askReset(t: TestApp, email: string, o: { tenant?: string; headers?: Record<string, string> } = {}) {
  const r = await t.json("POST", FORGOT, { body: { email }, ...o });
  await t.ctx.password.settled();
  return r;
}

/** Links of one kind of mail waiting in the outbox, newest first. */
export async function linksOf(t: TestApp, kind: string): Promise<string[]> {
  return (await t.ctx.repos.mail.list()).filter((r) => r.kind === kind).map((r) => r.link).filter((l): l is string => l !== null);
}

export const tokenOf = (link: string): string => decodeURIComponent(new URL(link).hash.replace(/^#token=/, ""));

export async function newestTokenOf(t: TestApp, kind: string): Promise<string> {
  const [link] = await linksOf(t, kind);
  if (!link) throw new Error(`no ${kind} link in the outbox`);
  return tokenOf(link);
}
