import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database";
import { type WalSync, startGroupCommit, walDatasync } from "../../src/db/group-commit";
import { testApp } from "../helpers";

const dir = mkdtempSync(join(tmpdir(), "suite-group-commit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `${++files}.db`);

/** A WAL sync the test releases by hand, counting how many were asked for. */
function heldSync() {
  const gates: Array<{ open: () => void; fail: (e: Error) => void }> = [];
  const sync: WalSync = {
    sync: () => new Promise<void>((open, fail) => void gates.push({ open, fail })),
    close: () => {},
  };
  return { sync, gates, release: () => gates.shift()!.open(), fail: (e: Error) => gates.shift()!.fail(e) };
}

async function until(what: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !what(); i++) await Bun.sleep(5);
  expect(what()).toBe(true);
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await Bun.sleep(0);
  return done;
};

function table(db: Database) {
  db.run("CREATE TABLE t (v INTEGER)");
  return (v: number) => db.run("INSERT INTO t (v) VALUES (?)", [v]);
}

test("the connection commits without fsync; nothing written means nothing to wait for", async () => {
  const db = openDatabase(file());
  const held = heldSync();
  const commits = startGroupCommit(db, held.sync);
  expect(db.query("PRAGMA synchronous").get()).toEqual({ synchronous: 1 });
  expect(await settled(commits.durable())).toBe(true);
  expect(held.gates.length).toBe(0);
  db.close();
});

test("an answer after a write waits for the sync; one sync covers every commit made before it started", async () => {
  const db = openDatabase(file());
  const held = heldSync();
  const commits = startGroupCommit(db, held.sync);
  const insert = table(db);
  insert(1);
  const first = commits.durable();
  insert(2);
  const second = commits.durable();
  // One sync asked for: it started at the first call, so it covers the first commit only.
  expect(held.gates.length).toBe(1);
  expect(await settled(first)).toBe(false);
  held.release();
  expect(await settled(first)).toBe(true);
  // The second commit came after the first sync read its mark: it needs a sync of its own.
  expect(await settled(second)).toBe(false);
  expect(held.gates.length).toBe(1);
  // The second sync started the moment the first ended: a third commit needs a third sync.
  insert(3);
  const third = commits.durable();
  held.release();
  expect(await settled(second)).toBe(true);
  expect(await settled(third)).toBe(false);
  held.release();
  expect(await settled(third)).toBe(true);
  expect(held.gates.length).toBe(0);
  // Nothing new: no sync.
  expect(await settled(commits.durable())).toBe(true);
  expect(held.gates.length).toBe(0);
  db.close();
});

test("fifty writers waiting at once share two syncs", async () => {
  const db = openDatabase(file());
  let syncs = 0;
  const commits = startGroupCommit(db, { sync: async () => void syncs++, close: () => {} });
  const insert = table(db);
  const waits = Array.from({ length: 50 }, (_, i) => {
    insert(i);
    return commits.durable();
  });
  await Promise.all(waits);
  expect(syncs).toBe(2);
  db.close();
});

test("a failed sync fails its waiters, and the next one tries again", async () => {
  const db = openDatabase(file());
  const held = heldSync();
  const commits = startGroupCommit(db, held.sync);
  table(db)(1);
  const waiting = commits.durable();
  held.fail(new Error("EIO"));
  await expect(waiting).rejects.toThrow("EIO");
  const again = commits.durable();
  expect(held.gates.length).toBe(1);
  held.release();
  await again;
  db.close();
});

test("walDatasync syncs the real WAL file, and the committed rows are in the file", async () => {
  const path = file();
  const db = openDatabase(path);
  const wal = walDatasync(path);
  const commits = startGroupCommit(db, wal);
  table(db)(7);
  await commits.durable();
  await commits.durable();
  commits.close();
  const peer = new Database(path, { readonly: true });
  expect(peer.query("SELECT v FROM t").get()).toEqual({ v: 7 });
  peer.close();
  db.close();
});

test("over HTTP: a write's answer is held until its commit is on disk, a refusal's too, a read's is not", async () => {
  const held = heldSync();
  const t = testApp({ db: file(), walSync: () => held.sync });
  try {
    const signup = t.signup("heldco");
    await until(() => held.gates.length === 1);
    expect(await settled(signup)).toBe(false);
    held.release();
    const { access_token } = await signup;
    // A refused write that wrote an audit row and a counter waits for them as well.
    const refused = t.json("POST", "/api/v1/auth/login", { body: { email: "admin@heldco.test", password: "wrong password 1" }, tenant: "heldco" });
    await until(() => held.gates.length === 1);
    expect(await settled(refused)).toBe(false);
    // A read is answered while that sync is still held.
    const read = await t.json("GET", "/api/v1/auth/me", { token: access_token });
    expect(read.status).toBe(200);
    expect(held.gates.length).toBe(1);
    expect(await settled(refused)).toBe(false);
    held.release();
    expect((await refused).status).toBe(401);
  } finally {
    t.close();
  }
});
