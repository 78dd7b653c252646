import { Elysia } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requestInfo } from "../http/client";
import { REFRESH_COOKIE, clearSessionCookies, setSessionCookies } from "../http/cookies";
import { checkCsrf } from "../http/csrf";
import { RequestValidationError, errors } from "../kernel/errors";
import { namedTenantId, requestedSubdomain } from "../http/tenancy";
import { lowerCaseFields } from "../kernel/validation";
import { toUserRead } from "../team/model";
import type { IssuedTokens } from "./service";
import { answerSignIn } from "./sign-in";
import { doc } from "../http/openapi";
import { Confirmation, LoginBody, LoginResponse, ReauthenticateBody, Reauthenticated, RefreshBody, RevokeSessionBody, SessionList, TokenPair } from "./model";
import { Me } from "./me-model";
import { compactCode } from "./two-factor/model";
import { hasPassword } from "./sign-in-providers/no-password";

/** A reauthenticate body gives the password or a passkey: neither is 422 at password (as before passkeys), both at passkey. */
const oneProof = (gavePassword: boolean) =>
  new RequestValidationError([
    gavePassword
      ? { loc: ["body", "passkey"], msg: "Give the password or a passkey, not both", type: "value_error" }
      : { loc: ["body", "password"], msg: "Field required", type: "missing" },
  ]);

const pair = (t: IssuedTokens): TokenPair => ({ access_token: t.access_token, refresh_token: t.refresh_token, token_type: t.token_type });

/** Sign-in, refresh and session management: /api/v1/auth. */
export const authRoutes = (ctx: Context) => {
  const tenantIdOf = (headers: Record<string, string | undefined>) => namedTenantId(headers, ctx.config.baseDomain, ctx.repos.tenants.bySubdomain);

  return new Elysia({ name: "auth-routes", prefix: "/api/v1/auth", seed: ctx.id })
    .post(
      "/login",
      async ({ body, headers, request, server, cookie }) => {
        const req = requestInfo(request, server, ctx.config.trustProxy);
        const user = await ctx.auth.checkPassword(body, await tenantIdOf(headers), req);
        return answerSignIn(cookie, ctx.config, await ctx.signIn(user, "password", req));
      },
      // Addresses are compared trimmed and in lower case (docs/interface.md#tenancy): accept them typed so.
      {
        body: LoginBody,
        transform: lowerCaseFields("email"),
        ...doc({
          summary: "Sign in with email and password",
          description: "Answers a token pair and sets the session cookies, or, when 2FA is on, `requires_2fa` and a `temp_token` (no cookie).",
          tags: ["auth"],
          ok: { 200: ["LoginResponse", LoginResponse] },
          cookies: "set",
          errors: [400, 401, 403, 404, 429],
          codes: { 400: ["tenant_required"] },
        }),
      },
    )
    .post(
      "/refresh",
      async ({ body, headers, request, server, cookie }) => {
        let token = body?.refresh_token;
        if (token === undefined) {
          token = cookie[REFRESH_COOKIE]?.value as string | undefined;
          if (!token) throw errors.notAuthenticated();
          checkCsrf(request.method, headers, ctx.config.baseDomain);
        }
        const req = requestInfo(request, server, ctx.config.trustProxy);
        const tokens = await ctx.auth.refresh(token, req, requestedSubdomain(headers, ctx.config.baseDomain));
        setSessionCookies(cookie, ctx.config, tokens);
        return pair(tokens);
      },
      {
        body: RefreshBody,
        ...doc({
          summary: "Rotate both tokens",
          description: "Takes the refresh token in the body or, with no body, the `svc_refresh` cookie.",
          tags: ["auth"],
          ok: { 200: ["TokenPair", TokenPair] },
          cookies: "set",
          errors: [401, 403],
        }),
      },
    )
    .use(authGuard(ctx))
    .get(
      "/me",
      async ({ auth }) => {
        const user = await ctx.repos.users.byId(auth.tenantId, auth.userId);
        if (!user) throw errors.sessionRevoked();
        return { user: toUserRead(user), tenant: await ctx.tenants.read(auth.tenantId), has_password: hasPassword(user), policy_setup: auth.policySetup ?? null } satisfies Me;
      },
      doc({ summary: "The signed-in user and their organization", tags: ["auth"], auth: true, ok: { 200: ["Me", Me] } }),
    )
    .post(
      "/reauthenticate",
      ({ auth, body, request, server }) => {
        const req = requestInfo(request, server, ctx.config.trustProxy);
        if (body.passkey !== undefined && body.password === undefined) return ctx.passkeys.reauthenticate(auth, body.passkey, req);
        if (body.password === undefined || body.passkey !== undefined) throw oneProof(body.password !== undefined);
        return ctx.twoFactor.reauthenticate(auth, { password: body.password, code: body.code }, req);
      },
      {
        body: ReauthenticateBody,
        transform: compactCode,
        ...doc({
          summary: "Prove the password again, for changes that need a recent sign-in",
          description:
            "`{\"password\"}`, plus `code` (a TOTP or backup code) when the user has 2FA on; or `{\"passkey\": …}`, a passkey's answer to `POST /auth/passkeys/login/options` (one of the caller's own; 401 `invalid_passkey` otherwise). Renews this session's proof: 2FA setup, confirm and backup-code regeneration, and adding, changing or removing an identity provider, need one within `SUITE_REAUTH_WINDOW` seconds (default 600), else 403 `reauthentication_required`. Limited like login (per IP and per account; a wrong password counts toward the sign-in lock): 401 `invalid_credentials`, 401 `invalid_2fa_code`, 429.",
          tags: ["auth"],
          auth: true,
          ok: { 200: ["Reauthenticated", Reauthenticated] },
          errors: [429],
        }),
      },
    )
    .get("/sessions", ({ auth }) => ctx.auth.listSessions(auth), doc({ summary: "The caller's live sessions, newest first", tags: ["auth"], auth: true, ok: { 200: ["SessionList", SessionList] } }))
    .post(
      "/sessions/revoke",
      async ({ auth, body, request, server, cookie }) => {
        const revoked = await ctx.auth.revokeSession(auth, body.session_id, requestInfo(request, server, ctx.config.trustProxy));
        if (body.session_id === auth.sessionId) clearSessionCookies(cookie, ctx.config);
        return { detail: "Session revoked.", revoked } satisfies Confirmation;
      },
      {
        body: RevokeSessionBody,
        ...doc({
          summary: "End one of the caller's sessions",
          description: "Ending the caller's own session also clears the cookies.",
          tags: ["auth"],
          auth: true,
          ok: { 200: ["Confirmation", Confirmation] },
          cookies: "clear",
          errors: [404],
        }),
      },
    )
    .post("/sessions/revoke-others", async ({ auth, request, server }) => {
      const revoked = await ctx.auth.revokeOthers(auth, requestInfo(request, server, ctx.config.trustProxy));
      return { detail: "Other sessions revoked.", revoked } satisfies Confirmation;
    }, doc({ summary: "End every session but this one", tags: ["auth"], auth: true, ok: { 200: ["Confirmation", Confirmation] } }))
    .post("/logout", async ({ auth, request, server, cookie }) => {
      const revoked = await ctx.auth.revokeSession(auth, auth.sessionId, requestInfo(request, server, ctx.config.trustProxy));
      clearSessionCookies(cookie, ctx.config);
      return { detail: "Signed out.", revoked } satisfies Confirmation;
    }, doc({ summary: "End this session and clear the cookies", tags: ["auth"], auth: true, ok: { 200: ["Confirmation", Confirmation] }, cookies: "clear" }))
    .post("/logout-all", async ({ auth, request, server, cookie }) => {
      const revoked = await ctx.auth.logoutAll(auth, requestInfo(request, server, ctx.config.trustProxy));
      clearSessionCookies(cookie, ctx.config);
      return { detail: "Signed out everywhere.", revoked } satisfies Confirmation;
    }, doc({ summary: "End every session of the caller, this one included", tags: ["auth"], auth: true, ok: { 200: ["Confirmation", Confirmation] }, cookies: "clear" }));
};
