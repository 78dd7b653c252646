import type { Config } from "../../config";
import type { Logger } from "../../kernel/logger";
import { hashToken, newSecretToken, newTenantToken, tokenTenant } from "../../kernel/ids";
import { errors } from "../../kernel/errors";
import type { DeviceCookie } from "../../kernel/principal";
import type { Mailer } from "../../mail/sender";
import type { Limits, RateLimiter } from "../../security/rate-limit";
import type { SecurityStore } from "../../security/repo";
import { auditEntry } from "../audit-entry";
import type { AccountTarget } from "../email/repo";
import type { RequestInfo } from "../service";
import { newDeviceMail } from "./mail";
import { DEVICE_FORGOTTEN_MS, NOTICE_TTL_MS, SOURCE_KNOWN_MS, newDeviceErrors } from "./model";
import type { KnownDeviceRow, NewDeviceStore } from "./repo";

export interface NewDeviceDeps {
  config: Config;
  now: () => number;
  log: Logger;
  store: NewDeviceStore;
  security: SecurityStore;
  limiter: RateLimiter;
  limits: Limits;
  mailer: Mailer;
  /** The account a mail goes to: its address, organization name and subdomain. */
  target: (tenantId: string, userId: string) => Promise<AccountTarget | null>;
  /** Mails the account a password-reset link (auth/password), after "this wasn't me". */
  mailReset: (target: AccountTarget, req: RequestInfo) => Promise<void>;
}

/** The session a sign-in opened: "this wasn't me" ends it and every later one. */
export interface OpenedSession {
  id: string;
  created_at: number;
}

/**
 * The new-device mail and "this wasn't me" (issue 33.2). A browser is known by its device cookie
 * (per organization, long-lived, remembered here by its hash, not tied to a session); an API
 * client (no Sec-Fetch-* headers: it gets no device cookie), by its IP address and user agent,
 * for 30 days after its mail. There is
 * no per-account switch: whoever holds a session could turn it off; only the operator can, for
 * the whole server (SUITE_NEW_DEVICE_MAIL=false).
 */
export function createNewDeviceService(d: NewDeviceDeps) {
  const sourceHash = (req: RequestInfo) => hashToken(`source\n${req.ip ?? ""}\n${req.userAgent ?? ""}`);

  /**
   * Every sign-in that opens a session ends here, whatever its method (password, password+2fa,
   * magic link, identity provider, passkey): a known device is marked seen; a new one is
   * remembered and, unless the operator turned the mail off, the account is mailed in the same
   * commit. Answers the device cookie to set (the same one when the request carried it).
   */
  async function signedIn(user: { tenant_id: string; id: string }, method: string, session: OpenedSession, req: RequestInfo): Promise<DeviceCookie | undefined> {
    const clue = req.device;
    // Not an HTTP request (the command line makes no sign-in of a user): nothing to tell.
    if (!clue) return undefined;
    const now = d.now();
    let device: KnownDeviceRow;
    let cookie: DeviceCookie | undefined;
    if (clue.browser) {
      // A browser is known by its device cookie alone; it gets one (or the same one again) with the tokens.
      const given = clue.cookies[user.tenant_id];
      cookie = { tenantId: user.tenant_id, secret: given ?? newSecretToken() };
      device = { tenant_id: user.tenant_id, user_id: user.id, device_hash: hashToken(cookie.secret), kind: "cookie", noticed_at: now, last_seen_at: now };
      const known = given ? await d.store.known(user.tenant_id, user.id, device.device_hash) : null;
      if (known) {
        await d.store.remember({ ...known, last_seen_at: now });
        return cookie;
      }
    } else {
      // An API client (no Sec-Fetch-*): its answers set no cookie beyond the session's, as before;
      // it is mailed about once per IP address and user agent per 30 days.
      device = { tenant_id: user.tenant_id, user_id: user.id, device_hash: sourceHash(req), kind: "source", noticed_at: now, last_seen_at: now };
      const known = await d.store.known(user.tenant_id, user.id, device.device_hash);
      if (known && now - known.noticed_at < SOURCE_KNOWN_MS) {
        await d.store.remember({ ...known, last_seen_at: now });
        return undefined;
      }
    }
    const target = d.config.newDeviceMail ? await d.target(user.tenant_id, user.id) : null;
    if (!target) {
      await d.store.remember(device);
      return cookie;
    }
    const token = newTenantToken(user.tenant_id);
    const mail = newDeviceMail(d.config, {
      tenantId: user.tenant_id, tenantName: target.tenant_name, subdomain: target.subdomain, recipient: target.email,
      token, at: session.created_at, ip: req.ip, userAgent: req.userAgent, method, ttlMs: NOTICE_TTL_MS,
    });
    await d.store.notice(
      [device],
      { tenant_id: user.tenant_id, token_hash: hashToken(token), user_id: user.id, session_id: session.id, session_created_at: session.created_at, created_at: now, expires_at: now + NOTICE_TTL_MS },
      mail,
      auditEntry("login.new_device", { tenantId: user.tenant_id, userId: user.id }, req, { method, session_id: session.id, browser: clue.browser }),
      now,
    );
    d.mailer.kick();
    return cookie;
  }

  /** Signup and invitation accept: the browser that made the account is known to it from the start. */
  async function remember(tenantId: string, userId: string, req: RequestInfo): Promise<DeviceCookie | undefined> {
    if (!req.device?.browser) return undefined;
    const now = d.now();
    const cookie: DeviceCookie = { tenantId, secret: req.device.cookies[tenantId] ?? newSecretToken() };
    await d.store.remember({ tenant_id: tenantId, user_id: userId, device_hash: hashToken(cookie.secret), kind: "cookie", noticed_at: now, last_seen_at: now });
    return cookie;
  }

  /**
   * POST /auth/not-me: the mailed token, once, within 7 days. Ends the new device's session, every
   * session of the user started since and their outstanding 2FA challenges (one commit, audited),
   * then mails a password-reset link: whoever signed in may know the password.
   */
  async function notMe(token: string, req: RequestInfo): Promise<number> {
    const perIp = await d.limiter.hit(d.limits.notMePerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const invalid = async () => {
      await d.security.audit(auditEntry("login.not_me_invalid", { tenantId: null, userId: null }, req, { reason: "unknown_used_or_expired" }), d.now());
      return newDeviceErrors.noticeInvalid();
    };
    const where = tokenTenant(token);
    if (!where?.tenantId) throw await invalid();
    const done = await d.store.notMe(where.tenantId, hashToken(token), d.now(), (row, ended) =>
      auditEntry("login.not_me", { tenantId: row.tenant_id, userId: row.user_id }, req, { session_id: row.session_id, sessions_ended: ended }),
    );
    if (!done) throw await invalid();
    const target = await d.target(done.row.tenant_id, done.row.user_id);
    if (target) await d.mailReset(target, req);
    return done.ended;
  }

  /** Housekeeping: expired links (a day after), devices unseen for 400 days. */
  const purgeExpired = (now: number) => d.store.purgeExpired(now - 86_400_000, now - DEVICE_FORGOTTEN_MS);

  return { signedIn, remember, notMe, purgeExpired };
}

export type NewDeviceService = ReturnType<typeof createNewDeviceService>;
