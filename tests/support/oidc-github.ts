import { noteSecret } from "../security/ledger";

/**
 * A GITHUB STAND-IN, not GitHub: just its OAuth authorize and token endpoints and the REST
 * API's /user and /user/emails, on loopback. The app reaches it through the test-only setting
 * SUITE_OIDC_TEST_GITHUB_URL. `emails` is what /user/emails answers for the signed-in account.
 */
export interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

export function startGithubStandIn(clientId: string, clientSecret: string) {
  noteSecret("oidc client secret", clientSecret);
  const state = { userId: 4242, emails: [] as GithubEmail[], tokenRequests: 0 };
  const codes = new Set<string>();
  const tokens = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/login/oauth/authorize") {
        const q = url.searchParams;
        if (q.get("client_id") !== clientId || q.get("code_challenge_method") !== "S256") return new Response("bad request", { status: 400 });
        const code = crypto.randomUUID();
        noteSecret("oauth code", code);
        codes.add(code);
        const back = new URL(q.get("redirect_uri")!);
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state") ?? "");
        return new Response(null, { status: 302, headers: { location: back.href } });
      }
      if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
        state.tokenRequests++;
        const form = new URLSearchParams(await req.text());
        const code = form.get("code") ?? "";
        if (!codes.delete(code) || form.get("client_secret") !== clientSecret || !form.get("code_verifier")) {
          return Response.json({ error: "bad_verification_code" });
        }
        const token = `gho_${crypto.randomUUID().replaceAll("-", "")}`;
        noteSecret("access token", token);
        tokens.add(token);
        return Response.json({ access_token: token, token_type: "bearer", scope: "read:user,user:email" });
      }
      const auth = req.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
      if (!tokens.has(auth)) return Response.json({ message: "Bad credentials" }, { status: 401 });
      if (url.pathname === "/user") return Response.json({ id: state.userId, login: "octo" });
      if (url.pathname === "/user/emails") return Response.json(state.emails);
      return new Response("not found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, state, close: () => server.stop(true) };
}
