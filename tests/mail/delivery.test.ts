import { afterEach, describe, expect, test } from "bun:test";
import { setCookies, testApp } from "../helpers";
import { firstLink, startSmtp, tokenOf, type TestSmtp } from "./smtp-support";

const MAGIC_LINK = "/api/v1/auth/magic-link";
const MAGIC_VERIFY = "/api/v1/auth/magic-verify";

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function appWithSmtp(smtp: TestSmtp) {
  const t = testApp({ env: { SUITE_SMTP_URL: smtp.url, SUITE_PUBLIC_URL: "http://localhost:8000", SUITE_MAIL_FROM: "Suite <no-reply@suite.test>" } });
  cleanup.push(() => t.close(), () => t.ctx.mail.stop());
  return t;
}

describe("mail delivery to a real SMTP server", () => {
  test("a requested magic link arrives at once, in text and HTML, and signs the user in", async () => {
    const smtp = await startSmtp();
    cleanup.push(() => smtp.close());
    const t = await appWithSmtp(smtp);
    t.ctx.mail.start();
    const org = await t.signup("acme");
    // Signup's verification mail goes first: wait for it, so the next one is the link's.
    await smtp.waitFor(1, 3000);

    const asked = await t.json("POST", MAGIC_LINK, { body: { email: "Admin@Acme.test " }, tenant: "acme" });
    expect(asked.status).toBe(202);
    // The poll is 15 s away: only the kick after the commit brings the mail this fast.
    const mail = (await smtp.waitFor(2, 3000))[1];

    expect(mail!.to).toEqual([org.email]);
    expect(mail!.from).toBe("no-reply@suite.test");
    expect(mail!.subject).toBe("Your sign-in link for Org acme");
    const link = firstLink(mail!.text);
    expect(link.startsWith("http://acme.localhost:8000/magic-link#token=")).toBe(true);
    expect(mail!.text).toContain("The link works once, for 10 minutes.");
    expect(mail!.html).toContain(`href="${link}"`);
    expect(mail!.html).toContain("<h1");

    // The sender marks the row once the server has answered: wait for that write.
    for (let i = 0; i < 100 && (await t.ctx.repos.mail.list())[0]?.status !== "sent"; i++) await Bun.sleep(5);
    const [row] = await t.ctx.repos.mail.list();
    expect(row).toMatchObject({ status: "sent", kind: "magic_link", attempts: 1, text_body: null, html_body: null, link: null });
    expect(row!.sent_at).not.toBeNull();

    const signedIn = await t.json("POST", MAGIC_VERIFY, { body: { token: tokenOf(link) }, tenant: "acme" });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.token_type).toBe("bearer");
    expect(Object.keys(setCookies(signedIn.res))).toEqual(expect.arrayContaining(["svc_session", "svc_refresh"]));
    const me = await t.json("GET", "/api/v1/auth/me", { token: signedIn.body.access_token });
    expect(me.body.user.email).toBe(org.email);

    const logged = JSON.stringify(t.logs);
    expect(logged).not.toContain(tokenOf(link));
    expect(logged).toContain('"msg":"mail sent"');
  });
});
