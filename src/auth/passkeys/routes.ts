import { Elysia, t } from "elysia";
import type { Context } from "../../context";
import { authGuard } from "../../http/auth-guard";
import { requestInfo } from "../../http/client";
import { doc } from "../../http/openapi";
import { namedTenantId, requestedSubdomain } from "../../http/tenancy";
import { TokenPair } from "../model";
import { answerSignIn } from "../sign-in";
import { CreationOptions, LoginVerifyBody, PasskeyList, PasskeyRead, RegisterVerifyBody, RenameBody, RequestOptions } from "./model";

const tags = ["passkeys"] as const;
const Id = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) });
const STEP_UP = "Needs a recent sign-in (`POST /api/v1/auth/reauthenticate` with the password or a passkey, within `SUITE_REAUTH_WINDOW` seconds), else 403 `reauthentication_required`.";

/** Passkeys (WebAuthn): /api/v1/auth/passkeys. Sign-in's two steps need no session; the rest does. */
export const passkeyRoutes = (ctx: Context) => {
  const info = (request: Request, server: Parameters<typeof requestInfo>[1]) => requestInfo(request, server, ctx.config.trustProxy);
  const tenantIdOf = (headers: Record<string, string | undefined>) => namedTenantId(headers, ctx.config.baseDomain, ctx.repos.tenants.bySubdomain);

  return new Elysia({ name: "passkey-routes", prefix: "/api/v1/auth/passkeys", seed: ctx.id })
    .post(
      "/login/options",
      async ({ headers, request, server }) => {
        const tenantId = await tenantIdOf(headers);
        return ctx.passkeys.loginOptions(tenantId, tenantId === null ? null : requestedSubdomain(headers, ctx.config.baseDomain), info(request, server));
      },
      doc({
        summary: "Start a passkey sign-in (or step-up): request options with a single-use challenge",
        description:
          "On the organization's host or with `X-Tenant`; on the base domain too, where the passkey's user handle names its account. Give the options to `navigator.credentials.get` (the challenge is good for 5 minutes, once), then send the answer to `/login/verify` or, signed in, to `POST /auth/reauthenticate` as `{\"passkey\": …}`. 400 `passkeys_unavailable` where there is no relying party (the base domain `localhost`, an IP address).",
        tags,
        ok: { 200: ["PasskeyRequestOptions", RequestOptions] },
        errors: [400, 403, 404, 429],
        codes: { 400: ["passkeys_unavailable", "tenant_required"] },
      }),
    )
    .post(
      "/login/verify",
      async ({ body, headers, request, server, cookie }) => {
        const tokens = await ctx.passkeys.loginVerify(body.response, await tenantIdOf(headers), info(request, server));
        return answerSignIn(cookie, ctx.config, { kind: "session", tokens });
      },
      {
        body: LoginVerifyBody,
        ...doc({
          summary: "Sign in with a passkey",
          description:
            "The browser's answer to `/login/options`: a token pair and the session cookies, as a password sign-in that passed 2FA (a passkey with user verification is two factors; the session's method is `passkey`). Every failure is 401 `invalid_passkey` (the audit log says why). Limited per IP like password sign-in.",
          tags,
          ok: { 200: ["TokenPair", TokenPair] },
          cookies: "set",
          errors: [401, 403, 404, 429],
        }),
      },
    )
    .use(authGuard(ctx))
    .post("/register/options", ({ auth }) => ctx.passkeys.registerOptions(auth), {
      ...doc({
        summary: "Start adding a passkey: creation options with a single-use challenge",
        description: `Discoverable credential, user verification required, attestation \`none\`; the user's passkeys are excluded. Give them to \`navigator.credentials.create\`, then send the answer to \`/register/verify\` within 5 minutes. ${STEP_UP}`,
        tags,
        auth: true,
        ok: { 200: ["PasskeyCreationOptions", CreationOptions] },
        errors: [400],
        codes: { 400: ["passkeys_unavailable"] },
      }),
    })
    .post(
      "/register/verify",
      async ({ auth, body, request, server, set }) => {
        const created = await ctx.passkeys.registerVerify(auth, body, info(request, server));
        set.status = 201;
        return created;
      },
      {
        body: RegisterVerifyBody,
        ...doc({
          summary: "Finish adding a passkey",
          description: `\`{"response": <the browser's credential>, "name"?}\`. 400 \`passkey_registration_failed\` when the challenge, origin, relying party, user verification or attestation do not check out. ${STEP_UP}`,
          tags,
          auth: true,
          ok: { 201: ["PasskeyRead", PasskeyRead] },
          errors: [400, 409],
          codes: { 400: ["passkey_registration_failed"], 409: ["passkey_already_registered"] },
        }),
      },
    )
    .get("/", ({ auth }) => ctx.passkeys.list(auth), doc({ summary: "The caller's passkeys, oldest first", tags, auth: true, ok: { 200: ["PasskeyList", PasskeyList] } }))
    .patch("/:id", ({ auth, params, body, request, server }) => ctx.passkeys.rename(auth, params.id, body.name, info(request, server)), {
      params: Id,
      body: RenameBody,
      ...doc({ summary: "Rename one of the caller's passkeys", tags, auth: true, ok: { 200: ["PasskeyRead", PasskeyRead] }, errors: [404] }),
    })
    .delete(
      "/:id",
      async ({ auth, params, request, server, set }) => {
        await ctx.passkeys.remove(auth, params.id, info(request, server));
        set.status = 204;
        return "";
      },
      {
        params: Id,
        ...doc({
          summary: "Remove one of the caller's passkeys",
          description:
            "409 `last_sign_in_method` when it is the only way the user can sign in (no password, no identity provider, no other passkey); " +
            `409 \`required_by_policy\` when it is the last passkey the organization's sign-in policy needs. ${STEP_UP}`,
          tags,
          auth: true,
          ok: { 204: null },
          errors: [404, 409],
          codes: { 409: ["last_sign_in_method", "required_by_policy"] },
        }),
      },
    );
};
