import type { Config } from "../../config";
import type { Logger } from "../../kernel/logger";
import { hashToken, newTenantToken, tokenTenant } from "../../kernel/ids";
import { AppError, errors } from "../../kernel/errors";
import { mailLink } from "../../mail/links";
import { renderMail } from "../../mail/render";
import type { Mailer } from "../../mail/sender";
import type { Limits, RateLimiter } from "../../security/rate-limit";
import type { SecurityStore } from "../../security/repo";
import { unnamedRequest } from "../audit-entry";
import { addressFromSource } from "../login-limits";
import { normalizeEmail } from "../../team/model";
import type { UserRow, UsersStore } from "../../team/repo";
import type { RequestInfo } from "../service";
import type { MagicLinkTarget, MagicLinksStore } from "./repo";

export interface MagicLinkDeps {
  config: Config;
  now: () => number;
  log: Logger;
  limiter: RateLimiter;
  limits: Limits;
  users: UsersStore;
  links: MagicLinksStore;
  security: SecurityStore;
  mailer: Mailer;
}

export const MAGIC_LINK_ACCEPTED = "If that address has an account, a sign-in link is on its way.";


export function createMagicLinkService(d: MagicLinkDeps) {
  /** Background deliveries not yet committed (tests and shutdown wait for them). */
  const inFlight = new Set<Promise<void>>();

  function compose(target: MagicLinkTarget, token: string) {
    const url = mailLink(d.config, target.subdomain, "/magic-link", token);
    const minutes = Math.max(1, Math.round(d.config.magicLinkTtl / 60));
    const mail = renderMail({
      subject: `Your sign-in link for ${target.tenant_name}`,
      heading: `Sign in to ${target.tenant_name}`,
      paragraphs: [
        `Someone, probably you, asked to sign in to ${target.tenant_name} (${target.subdomain}) as ${target.email}.`,
        "If it was not you, ignore this mail: without the link, no one can sign in.",
      ],
      action: { label: "Sign in", url },
      footer: `The link works once, for ${minutes} minute${minutes === 1 ? "" : "s"}.`,
    });
    return { url, mail };
  }

  /** Writes the link, its mail and its audit row in one transaction: either all exist or none does. */
  async function issueFor(target: MagicLinkTarget, req: RequestInfo): Promise<void> {
    const token = newTenantToken(target.tenant_id);
    const { url, mail } = compose(target, token);
    const now = d.now();
    await d.links.issue(
      { token_hash: hashToken(token), tenant_id: target.tenant_id, user_id: target.id, expires_at: now + d.config.magicLinkTtl * 1000, created_at: now },
      { tenantId: target.tenant_id, kind: "magic_link", recipient: target.email, subject: mail.subject, text: mail.text, html: mail.html, link: url },
      { tenantId: target.tenant_id, userId: target.id, action: "magic_link.requested", ip: req.ip, userAgent: req.userAgent },
      now,
    );
  }

  async function deliver(email: string, tenantId: string | null, req: RequestInfo): Promise<void> {
    const one = tenantId ? await d.links.target(tenantId, email) : null;
    const targets = tenantId ? (one ? [one] : []) : await d.links.targetsAnyTenant(email);
    for (const target of targets) await issueFor(target, unnamedRequest(req, tenantId !== null));
    if (targets.length > 0) d.mailer.kick();
  }

  /**
   * Asks for a link. The limits are checked the same way for every address, known or not;
   * then the answer goes back at once and the lookup and writes happen after it, so neither
   * the status, the body nor the time taken says whether the address has an account.
   */
  async function request(rawEmail: string, tenantId: string | null, req: RequestInfo): Promise<void> {
    const email = normalizeEmail(rawEmail);
    const perIp = await d.limiter.hit(d.limits.magicLinkPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    // Per address and source, across workspaces, whether or not it exists: the limit itself reveals
    // nothing, and a stranger's requests use up only their own source's allowance (issue 29.8).
    const perAddress = await d.limiter.hit(d.limits.magicLinkPerAddress, addressFromSource(email, req.ip));
    if (!perAddress.allowed) throw errors.rateLimited(perAddress.retryAfterSeconds);

    // setImmediate, not a bare call: even the lookup must wait until the answer has been
    // written, or a known address would spend its commit (an fsync) inside the request.
    const job: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => deliver(email, tenantId, req))
      .catch((e: unknown) => d.log({ level: "error", msg: "magic link not issued", error: e instanceof Error ? e.message : String(e) }))
      .finally(() => inFlight.delete(job));
    inFlight.add(job);
  }

  /**
   * Redeems a token: answers the user it signs in, once. A token of another workspace than the
   * one the request names is refused without being spent, so it still works where it belongs.
   */
  async function verify(token: string, tenantId: string | null, req: RequestInfo): Promise<UserRow> {
    const hash = hashToken(token);
    const now = d.now();
    const refuse = async (reason: string, who: { tenantId: string | null; userId: string | null }, error: AppError) => {
      await d.security.audit({ ...who, action: "magic_link.invalid", ip: req.ip, userAgent: req.userAgent, detail: { reason } }, now);
      return error;
    };
    const perIp = await d.limiter.hit(d.limits.magicVerifyPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);

    // `<tenant>.<secret>`, or a bare secret mailed before links named their tenant; anything else
    // is refused as an unknown link, without a query.
    const where = tokenTenant(token);
    if (!where) throw await refuse("malformed", { tenantId, userId: null }, errors.invalidToken());
    const link = await d.links.live(where.tenantId, hash, now);
    if (!link) throw await refuse("unknown_used_or_expired", { tenantId, userId: null }, errors.invalidToken());
    const who = { tenantId: link.tenant_id, userId: link.user_id };
    if (tenantId !== null && tenantId !== link.tenant_id) throw await refuse("tenant_mismatch", who, errors.tenantMismatch());
    const used = await d.links.consume(hash, link.tenant_id, now);
    // Another request spent it between the two statements: exactly one of them signs in.
    if (!used) throw await refuse("used", who, errors.invalidToken());
    const user = await d.users.byId(used.tenant_id, used.user_id);
    if (!user) throw await refuse("user_gone", who, errors.invalidToken());
    return user;
  }

  return {
    request,
    verify,
    /** Resolves once every link asked for so far is committed (or has failed and been logged). */
    settled: async (): Promise<void> => {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}

export type MagicLinkService = ReturnType<typeof createMagicLinkService>;
