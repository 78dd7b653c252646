// Instructions one default deal-list request costs, counted by valgrind (callgrind): repeatable on
// a machine others load, where wall and CPU times are not. The script signs in natively (argon2
// under valgrind takes minutes), then runs itself under callgrind twice, with INSTR_FEW and
// INSTR_MANY requests after the same warm-up, and divides the difference by the difference in
// requests: start-up, seeding and the warm-up cancel out.
//   bun bench/probes/request-instructions.ts [DB] [DIR ...]   (DIR: other checkouts, e.g. main's, measured the same way)
// The DB is request-profile.ts's (seeded with PROFILE_DEALS deals when missing). Needs valgrind.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { benchMemberToken } from "./member-login";
import { eventLoopTurns } from "../process-support";

const PASSWORD = "profile password 1";
const SECRET = "profile-secret-profile-secret-0123456789";
const here = resolve(import.meta.dir, "..", "..");

async function contextOf(dir: string, dbFile: string) {
  const { createContext } = await import(`${dir}/src/context.ts`);
  const { loadConfig } = await import(`${dir}/src/config.ts`);
  return createContext({ config: loadConfig({}, { SUITE_DB: dbFile, SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: SECRET }) });
}

if (process.env.INSTR_CHILD) {
  // Under valgrind: serve INSTR_REQS requests through the app, after a warm-up.
  const dir = process.env.INSTR_DIR!;
  const ctx = await contextOf(dir, process.env.INSTR_DB!);
  const app = (await import(`${dir}/src/app.ts`)).createApp(ctx);
  const headers = { authorization: `Bearer ${process.env.INSTR_TOKEN}` };
  const url = "http://localhost/api/v1/crm/deals";
  const one = async () => {
    const r = await app.handle(new Request(url, { headers }));
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${r.status} ${text}`);
  };
  const turn = eventLoopTurns();
  for (let i = 0; i < Number(process.env.INSTR_WARM); i++) {
    await one();
    await turn();
  }
  for (let i = 0; i < Number(process.env.INSTR_REQS); i++) {
    await one();
    await turn();
  }
  ctx.close();
  process.exit(0);
}

const dbFile = process.argv[2] ?? "/tmp/suite-profile.db";
const dirs = [here, ...process.argv.slice(3).map((d) => resolve(d))];
if (!existsSync(dbFile)) throw new Error(`${dbFile} is missing: run bench/probes/request-profile.ts ${dbFile} once to seed it`);
const few = Number(process.env.INSTR_FEW ?? 200);
const many = Number(process.env.INSTR_MANY ?? 1200);
const warm = Number(process.env.INSTR_WARM ?? 3000);

// A member's access token, signed in natively (the secret is fixed, so the children accept it).
const ctx = await contextOf(here, dbFile);
const { createApp } = await import("../../src/app");
const app = createApp(ctx);
const token = await benchMemberToken(app, ctx.db, PASSWORD);
ctx.close();

function instructions(dir: string, reqs: number): number {
  const out = `/tmp/callgrind.instr.${process.pid}.${reqs}`;
  const r = spawnSync(
    "valgrind",
    ["--tool=callgrind", `--callgrind-out-file=${out}`, "--dump-instr=no", process.execPath, import.meta.path],
    {
      env: { ...process.env, INSTR_CHILD: "1", INSTR_DIR: dir, INSTR_DB: dbFile, INSTR_TOKEN: token, INSTR_REQS: String(reqs), INSTR_WARM: String(warm) },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  if (r.status !== 0) throw new Error(`valgrind (${dir}, ${reqs}): ${r.status} ${r.stderr.toString().slice(-2000)}`);
  const summary = /^summary:\s+(\d+)/m.exec(readFileSync(out, "utf8"));
  rmSync(out, { force: true });
  if (!summary) throw new Error("no summary in callgrind's output");
  return Number(summary[1]);
}

for (const dir of dirs) {
  const a = instructions(dir, few);
  const b = instructions(dir, many);
  process.stdout.write(`${dir}: ${((b - a) / (many - few) / 1e6).toFixed(3)}M instructions a request (${few} vs ${many} requests after ${warm})\n`);
}
