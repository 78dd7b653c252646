// bun run crash-test [--source | --binary FILE] [--postgres] [--rounds N] [--clients C] [--seed S]:
// starts the server (dist/suite; `bun src/main.ts` with --source) on a fresh database with a real
// SMTP server, lets C clients create and update deals and invite people, kills it with SIGKILL at
// a random moment, and after every kill checks that each acknowledged write is in the file and that
// PRAGMA integrity_check is ok; at the end it waits for a mail per acknowledged invitation and
// stops the server with SIGTERM. Exits non-zero, with a line saying why, if anything was lost.
// With --postgres: a throwaway PostgreSQL cluster of its own and THREE servers on it, the writes
// spread over all three; each round kills one of them at random (SIGKILL) while writes are in
// flight on all three, then checks every acknowledged write over SQL and restarts it.
// The seed replays the random choices (operations, kill delays, victims), not the machine's timing.
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { type CutCreate, keyProblems, retryCutCreates } from "./crash/keys";
import { connectionsGone, readRows, startCrashDatabase } from "./crash/postgres";
import { fail, options, seededRandom, serverWorld, startMailSink } from "./crash/world";

const INVITES_PER_ADMIN = 45; // under the limit of 50 an hour, with room for cut-off attempts
const MAIL_WAIT_MS = 45_000; // a killed server's lease (10 s) plus room on a busy machine

const opts = options();
const { random, pick } = seededRandom(opts.seed);
const sink = await startMailSink();
const mails = sink.mails;
const database = opts.postgres ? await startCrashDatabase() : null;
const { suite, dir, dbFile, env, startServer } = await serverWorld(opts, sink.port, database ? { SUITE_DATABASE_URL: database.url } : {});

console.log(
  `crash-test: ${opts.source ? "bun src/main.ts" : opts.binary}, ${opts.rounds} rounds, ${opts.clients} clients, seed ${opts.seed} ` +
    `(replay with --seed ${opts.seed}), database ${database ? `PostgreSQL ${database.url}, three servers` : dbFile}, SMTP on port ${sink.port}`,
);

// ---- tenants, writes and what was acknowledged ----

interface Tenant { sub: string; token: string; accountId: string; invites: number }
interface Write { cents: number; sent: number; acked: number | null; round: number }
interface Deal { id: string; title: string; tenant: Tenant; writes: Write[] }

const tenantCount = Math.max(3, Math.ceil((opts.rounds * 2 * opts.clients) / INVITES_PER_ADMIN) + 1);
const tenants: Tenant[] = [];
const deals: Deal[] = [];
const invitations: { tenant: Tenant; email: string }[] = [];
const refused: string[] = [];
const roundEnds: number[] = []; // when each round's server was killed: the latest a cut-off write can land
let cents = 100_000;
let inviteNo = 0;
let acknowledged = 0;
let cutOff = 0;
const cutCreates: CutCreate[] = []; // deal creates a kill cut off: sent again with their Idempotency-Key
let keysWaiting = 0;
let cutResent = 0;
let cutAnswered = 0;

async function createTenants(): Promise<void> {
  const migrate = Bun.spawnSync([...suite, "migrate"], { cwd: dir, env });
  if (migrate.exitCode !== 0) fail(`migrate exited ${migrate.exitCode}: ${migrate.stderr}`);
  const subs = Array.from({ length: tenantCount }, (_, i) => `crash${i + 1}`);
  for (let i = 0; i < subs.length; i += 4) {
    await Promise.all(
      subs.slice(i, i + 4).map(async (sub) => {
        const args = ["tenant", "create", "--name", `Crash ${sub}`, "--subdomain", sub, "--admin-email", `admin@${sub}.test`];
        // The password goes by environment, not argv, so it is in no process list.
        const p = Bun.spawn([...suite, ...args], { cwd: dir, env: { ...env, SUITE_NEW_PASSWORD: `crash test passphrase ${sub.length}` }, stdout: "pipe", stderr: "pipe" });
        if ((await p.exited) !== 0) fail(`tenant create ${sub} failed: ${await new Response(p.stderr).text()}`);
      }),
    );
  }
  tenants.push(...subs.map((sub) => ({ sub, token: "", accountId: "", invites: 0 })));
}

async function call(base: string, method: string, path: string, token: string | null, body: unknown, tenant?: string, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { "content-type": "application/json", ...extra };
  if (token) headers.authorization = `Bearer ${token}`;
  if (tenant) headers["x-tenant"] = tenant;
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function signInTenants(base: string): Promise<void> {
  for (const t of tenants) {
    const login = await call(base, "POST", "/auth/login", null, { email: `admin@${t.sub}.test`, password: `crash test passphrase ${t.sub.length}` }, t.sub);
    if (login.status !== 200) fail(`login to ${t.sub} answered ${login.status}`);
    t.token = login.body.access_token;
    const account = await call(base, "POST", "/crm/accounts", t.token, { name: `Crash account of ${t.sub}` });
    if (account.status !== 201) fail(`account in ${t.sub} answered ${account.status}`);
    t.accountId = account.body.id;
  }
}

const money = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")}`;

/** `base` names the server for the next write: the one server, or the three in turn. */
interface Round { no: number; base: () => string; invites: number; over: boolean }

/** Each admin may invite 50 an hour: a round gets its share, spread over its writes. */
const invitesPerRound = 2 * opts.clients;
const mayInvite = (round: Round) => round.invites < invitesPerRound && tenants.some((t) => t.invites < INVITES_PER_ADMIN);

/** One write, counted as acknowledged once its 2xx answer was fully read (before the kill). */
async function write(round: Round): Promise<void> {
  const base = round.base();
  const { no } = round;
  const r = random();
  let send: () => Promise<{ status: number; body: Record<string, any> }>;
  let onAck: (body: Record<string, any>, at: number) => void;
  let onCut = () => {};
  let expected: number;
  if (r < 0.03 && mayInvite(round)) {
    round.invites++;
    const open = tenants.filter((t) => t.invites < INVITES_PER_ADMIN);
    const t = pick(open);
    t.invites++;
    const email = `crash-${opts.seed}-${++inviteNo}@invitee.test`;
    send = () => call(base, "POST", "/users/invite", t.token, { email });
    onAck = () => invitations.push({ tenant: t, email });
    expected = 201;
  } else if (r < 0.55 && deals.length > 0) {
    const deal = pick(deals);
    const w: Write = { cents: ++cents, sent: performance.now(), acked: null, round: no };
    deal.writes.push(w);
    send = () => call(base, "PATCH", `/crm/deals/${deal.id}`, deal.tenant.token, { value: money(w.cents) });
    onAck = (_, at) => (w.acked = at);
    expected = 200;
  } else {
    const t = pick(tenants);
    const w: Write = { cents: ++cents, sent: performance.now(), acked: null, round: no };
    const title = `crash deal ${w.cents}`;
    const body = { title, account_id: t.accountId, value: money(w.cents) };
    const key = `crash-${opts.seed}-${w.cents}`;
    send = () => call(base, "POST", "/crm/deals", t.token, body, undefined, { "idempotency-key": key });
    onCut = () => cutCreates.push({ key, title, token: t.token, body });
    onAck = (body, at) => {
      w.acked = at;
      deals.push({ id: body.id, title, tenant: t, writes: [w] });
    };
    expected = 201;
  }
  let answer: { status: number; body: Record<string, any> };
  try {
    answer = await send();
  } catch {
    cutOff++; // cut off by the kill: it may or may not have landed
    onCut();
    return;
  }
  if (answer.status !== expected) {
    refused.push(`${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    return;
  }
  acknowledged++;
  onAck(answer.body, performance.now());
}

// ---- checks ----

/** The deals and invitations in the SQLite file itself (no server running), and its integrity. */
function fileRows() {
  const db = new Database(dbFile, { readonly: true });
  try {
    const integrity = (db.query("PRAGMA integrity_check").all() as { integrity_check: string }[]).map((r) => r.integrity_check).join("; ");
    const rows = new Map((db.query("SELECT id, title, value_cents FROM deals").all() as { id: string; title: string; value_cents: number }[]).map((r) => [r.id, r]));
    const invited = new Set((db.query("SELECT t.subdomain || ' ' || i.email AS k FROM invitations i JOIN tenants t ON t.id = i.tenant_id").all() as { k: string }[]).map((r) => r.k));
    const keys = db.query("SELECT key, state, resource_id FROM idempotency_keys").all() as { key: string; state: string; resource_id: string | null }[];
    return { deals: rows, invited, integrity, keys };
  } finally {
    db.close();
  }
}

/**
 * Every acknowledged write against the database, and (SQLite) the file's integrity. PostgreSQL's
 * server is never killed here (only the suite's instances are): its integrity is not in question.
 */
async function checkFile(): Promise<{ lost: Map<string, string>; integrity: string }> {
  const { deals: rows, invited, integrity, keys } = database ? { ...(await readRows(database.pg)), integrity: "ok" } : fileRows();
  {
    const lost = new Map<string, string>(); // one entry per lost write's deal or invitation
    for (const p of keyProblems(rows.values(), keys)) lost.set(p, p);
    for (const d of deals) {
      const row = rows.get(d.id);
      if (!row || row.title !== d.title) {
        lost.set(d.id, `deal ${d.id} (${d.title}) acknowledged as created, ${row ? `but titled ${row.title}` : "but missing"}`);
        continue;
      }
      // The value read back must come from a write no acknowledged write followed: one that was
      // sent after it was acknowledged (or after the server that may have taken it was killed).
      const from = d.writes.find((w) => w.cents === row.value_cents);
      const done = (w: Write) => w.acked ?? roundEnds[w.round] ?? Infinity;
      const later = from && d.writes.find((w) => w.acked !== null && w.sent > done(from));
      if (!from) lost.set(d.id, `deal ${d.id} holds value ${money(row.value_cents)}, which no client wrote`);
      else if (later) lost.set(d.id, `deal ${d.id} holds ${money(from.cents)}, but ${money(later.cents)} was acknowledged later`);
    }
    for (const i of invitations) if (!invited.has(`${i.tenant.sub} ${i.email}`)) lost.set(i.email, `invitation of ${i.email} in ${i.tenant.sub} acknowledged but missing`);
    return { lost, integrity };
  }
}

/** The creates a kill cut off, sent again with their keys: each acknowledged one is checked like any other. */
async function retryCut(base: string): Promise<void> {
  cutResent += cutCreates.length;
  const r = await retryCutCreates(cutCreates, (method, path, token, body, headers) => call(base, method, path, token, body, undefined, headers));
  for (const d of r.acked) {
    acknowledged++;
    const cents = Number(d.title.replace("crash deal ", ""));
    if (!deals.some((x) => x.id === d.id)) deals.push({ id: d.id, title: d.title, tenant: tenants.find((t) => t.token === d.token)!, writes: [{ cents, sent: 0, acked: 0, round: -1 }] });
  }
  refused.push(...r.problems);
  keysWaiting = r.waiting;
  cutAnswered += r.acked.length;
}

/** A sample of acknowledged deals, read back through the restarted server. */
async function checkServed(base: string): Promise<Map<string, string>> {
  const wrong = new Map<string, string>();
  for (let i = 0; i < Math.min(10, deals.length); i++) {
    const d = pick(deals);
    const r = await call(base, "GET", `/crm/deals/${d.id}`, d.tenant.token, undefined);
    if (r.status !== 200 || r.body.title !== d.title) wrong.set(d.id, `GET /crm/deals/${d.id} answered ${r.status} after the restart`);
  }
  return wrong;
}

// ---- the rounds ----

const lost = new Map<string, string>();
const note = (found: Map<string, string>, prefix = "") => {
  for (const [k, v] of found) if (!lost.has(k)) lost.set(k, prefix + v);
};
let integrityOk = true;
await createTenants();
type Server = Awaited<ReturnType<typeof startServer>>;
/** The servers up: one on SQLite (restarted each round), three on PostgreSQL (one replaced each round). */
const servers: Server[] = database ? await Promise.all([startServer(), startServer(), startServer()]) : [];
let turn = 0;
for (let round = 0; round < opts.rounds; round++) {
  if (!database) servers[0] = await startServer();
  if (round === 0) await signInTenants(servers[0]!.base);
  else for (const s of servers) note(await checkServed(s.base));
  await retryCut(servers[0]!.base);
  const before = acknowledged;
  const cutBefore = cutOff;
  const state: Round = { no: round, base: () => servers[turn++ % servers.length]!.base, invites: 0, over: false };
  const clients = Array.from({ length: opts.clients }, async () => {
    while (!state.over) await write(state);
  });
  const delay = 50 + Math.floor(random() * 1450);
  await Bun.sleep(delay);
  state.over = true; // no new writes: the ones in flight meet the kill
  const victim = database ? Math.floor(random() * servers.length) : 0;
  const server = servers[victim]!;
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  // A COMMIT the victim sent just before dying lands when its connection is read: wait for that.
  if (database && !(await connectionsGone(database.pg, server.proc.pid))) fail(`round ${round + 1}: the killed server's connections were still open after 30 s`);
  roundEnds[round] = performance.now();
  await Promise.all(clients);
  const checked = await checkFile();
  note(checked.lost, `round ${round + 1}: `);
  if (checked.integrity !== "ok") {
    integrityOk = false;
    console.error(`crash-test: round ${round + 1}: integrity_check says ${checked.integrity}`);
  }
  console.log(
    `round ${round + 1}: up in ${server.readyMs.toFixed(0)} ms, ${database ? `server ${victim + 1} of 3` : "the server"} killed after ${delay} ms, ` +
      `${acknowledged - before} writes acknowledged, ${cutOff - cutBefore} cut off; all ${acknowledged} so far checked: lost ${checked.lost.size}` +
      (database ? "" : `, integrity ${checked.integrity}`),
  );
  if (database) servers[victim] = await startServer();
}

// ---- the end: every acknowledged invitation's mail arrives, then a clean stop ----

if (!database) servers[0] = await startServer();
for (const s of servers) note(await checkServed(s.base), "after the last restart: ");
await retryCut(servers[0]!.base);
const waitStart = performance.now();
const undelivered = () => invitations.filter((i) => !mails.has(i.email));
while (undelivered().length > 0 && performance.now() - waitStart < MAIL_WAIT_MS) await Bun.sleep(50);
const mailWait = performance.now() - waitStart;
const stopStart = performance.now();
const exitCodes = await Promise.all(
  servers.map(async (s) => {
    s.proc.kill("SIGTERM");
    const code = await Promise.race([s.proc.exited, Bun.sleep(15_000).then(() => null)]);
    if (code === null) s.proc.kill("SIGKILL");
    return code;
  }),
);
const notZero = exitCodes.filter((c) => c !== 0);
const exitCode = notZero.length === 0 ? 0 : notZero[0]!;
const stopMs = performance.now() - stopStart;
void sink.close();

const last = await checkFile();
if (last.integrity !== "ok") integrityOk = false;
note(last.lost, "after the clean stop: ");
await database?.stop();
const missing = undelivered();
const delivered = invitations.length - missing.length;
const inviteMails = [...mails.entries()].filter(([to]) => to.endsWith("@invitee.test"));
const duplicates = inviteMails.reduce((n, [, count]) => n + count - 1, 0);

console.log(
  `final start: up in ${Math.max(...servers.map((s) => s.readyMs)).toFixed(0)} ms; mail for every acknowledged invitation after ${mailWait.toFixed(0)} ms; ` +
    `SIGTERM -> exit ${exitCodes.map((c) => c ?? "none").join(", ")} in ${stopMs.toFixed(0)} ms; ${cutOff} writes cut off in all; ` +
    `cut-off creates sent again with their Idempotency-Key ${cutResent} times: ${cutAnswered} answered with their deal, ${keysWaiting} still in progress at the end ` +
    "(a key claimed when its server died frees itself after 60 s)",
);
for (const p of [...lost.values()].slice(0, 20)) console.error(`crash-test: LOST ${p}`);
for (const r of refused.slice(0, 10)) console.error(`crash-test: a write was refused: ${r}`);
for (const m of missing.slice(0, 10)) console.error(`crash-test: no mail arrived for the invitation of ${m.email}`);
if (exitCode !== 0) console.error(`crash-test: a last server did not exit 0 on SIGTERM (${exitCode === null ? "still running after 15 s" : `exit ${exitCode}`})`);
if (!integrityOk) console.error("crash-test: PRAGMA integrity_check failed");
console.log(
  `crash-test${database ? " (PostgreSQL, three servers)" : ""}: ${opts.rounds} rounds, ${acknowledged} writes acknowledged, ${lost.size} lost, ` +
    `integrity ${database ? "not applicable (the database server is not killed)" : integrityOk ? "ok" : "FAILED"}, ` +
    `${delivered}/${invitations.length} invitation mails delivered (${duplicates} duplicates)`,
);
const ok = lost.size === 0 && integrityOk && missing.length === 0 && refused.length === 0 && exitCode === 0;
if (ok) rmSync(dir, { recursive: true, force: true });
else console.error(`crash-test: FAILED (seed ${opts.seed}); the database and server logs are kept in ${dir}`);
process.exit(ok ? 0 : 1);
