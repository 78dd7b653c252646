import { afterAll, beforeAll, expect, test } from "bun:test";
import { TENANT, type World, crmWorld, look } from "./crm-kit";
import { BINARY } from "./support";

/**
 * The operator's commands (`suite user …`, `suite tenant …`, issue 18) in the Security log: the
 * built binary unlocks the owner beside the running server, and the log names the command line
 * as who did it, with the action in the filter's list.
 */

const STEP = 60_000;
let w: World;

beforeAll(async () => {
  w = await crmWorld();
  const p = Bun.spawn([BINARY, "user", "unlock", "--tenant", TENANT, "--email", "owner@acme.test"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SUITE_DB: w.server.db },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  expect(out).toContain("lockout lifted for owner@acme.test");
}, STEP);
afterAll(() => w?.close());

test("a command line row shows Command line as who, its command in the detail, and its action in the filter", async () => {
  const page = w.page;
  await page.goto(`${w.origin}/security-log?action=user.unlocked`);
  const row = page.locator("table tbody tr").first();
  await row.waitFor();
  expect(await page.locator("table tbody tr").count()).toBe(1);
  expect(await row.locator("td:nth-child(2)").textContent()).toBe("Command line");
  expect(await row.locator("td:nth-child(3)").textContent()).toBe("user.unlocked");
  expect(await row.locator("td:nth-child(5)").textContent()).toBe("Command line (suite)");
  await page.getByText("1 entry", { exact: true }).waitFor();
  expect(await row.locator("td:nth-child(6)").textContent()).toContain('"command":"suite user unlock"');
  // The filter opens on the chosen action, listed among the known ones (not as an extra).
  expect(await page.getByRole("group", { name: "Members" }).getByRole("checkbox", { name: "user.unlocked" }).isChecked()).toBe(true);
  expect(await page.getByRole("checkbox", { name: "tenant.disabled" }).count()).toBe(1);
  await look(page, "security-log-cli");
}, STEP);

test("no console error, no failed request, no request to another host", () => {
  expect(w.problems).toEqual([]);
  expect(w.expected).toEqual([]);
}, STEP);
