// The small organization of `bun run bench neighbours`: a separate process (so the load generator
// is never the server's bottleneck nor slowed by the bench's own work) that, every 100 ms, signs in
// by password, reads /auth/me, lists deals and creates a deal, round-robin over the given servers.
// Each operation is printed as one JSON line {t, op, ms, status}: t is its start (epoch ms), so the
// bench can place it in the phase (quiet, import, export, …) it ran in.
//
//   bun bench/neighbours-client.ts BASE[,BASE…] SUBDOMAIN EMAIL PASSWORD
// It runs until its standard input closes or it gets SIGTERM.

export {};

const [bases, sub, email, password] = [process.argv[2]!.split(","), process.argv[3]!, process.argv[4]!, process.argv[5]!];
const PERIOD_MS = 100;
const TIMEOUT_MS = 30_000;
let stopping = false;
process.on("SIGTERM", () => (stopping = true));

function print(t: number, op: string, ms: number, status: number): void {
  process.stdout.write(`${JSON.stringify({ t, op, ms: Math.round(ms * 100) / 100, status })}\n`);
}

/** One timed request; a network error or a time-out is status 0 (counted as an error). */
async function timed(op: string, url: string, init: RequestInit): Promise<Response | null> {
  const t = Date.now();
  const started = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const body = await res.arrayBuffer();
    print(t, op, performance.now() - started, res.status);
    return new Response(body, { status: res.status, headers: res.headers });
  } catch {
    print(t, op, performance.now() - started, 0);
    return null;
  }
}

let n = 0;
/** An account of the organization, for the deals it creates (a deal names its account). */
let accountId: string | undefined;
while (!stopping) {
  const started = performance.now();
  const base = bases[n % bases.length]!;
  n++;
  // B is a team of people at many addresses (the server trusts X-Forwarded-For here), so the
  // per-address sign-in limit (60 a minute) is not what this bench measures. 198.18/15 is the
  // benchmarking range: only a header, nothing is sent there.
  const json = { "content-type": "application/json", "x-tenant": sub, "x-forwarded-for": `198.18.${(n >> 8) & 255}.${n & 255}` };
  const login = await timed("sign-in", `${base}/api/v1/auth/login`, { method: "POST", headers: json, body: JSON.stringify({ email, password }) });
  const token = login?.ok ? ((await login.json()) as { access_token?: string }).access_token : undefined;
  if (token) {
    const auth = { ...json, authorization: `Bearer ${token}` };
    await timed("auth/me", `${base}/api/v1/auth/me`, { headers: auth });
    await timed("list deals", `${base}/api/v1/crm/deals?page=1&size=25`, { headers: auth });
    if (!accountId) {
      const r = await fetch(`${base}/api/v1/crm/accounts?size=1`, { headers: auth });
      accountId = ((await r.json()) as { items?: { id: string }[] }).items?.[0]?.id;
    }
    if (accountId)
      await timed("create deal", `${base}/api/v1/crm/deals`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ title: `Neighbour deal ${n}`, account_id: accountId, value: "1250.00", currency: "EUR" }),
    });
  }
  const rest = PERIOD_MS - (performance.now() - started);
  if (rest > 0) await Bun.sleep(rest);
}
