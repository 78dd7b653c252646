// The crash test's Idempotency-Key part (issue 28 item 6): every deal create carries a key; the
// creates a kill cut off (they may or may not have landed) are sent again, with the same key and
// body, once a server is up again; and after every round the stored keys and deals must agree: a
// key that says 'created' or 'done' names a deal that exists, every deal has its key naming it (so
// a create and its key commit together across SIGKILL), and no title is stored twice (no retry
// made a second deal).

export interface KeyRow {
  key: string;
  state: string;
  resource_id: string | null;
}

/** A deal create cut off by a kill: sent again later with the same key and body. */
export interface CutCreate {
  key: string;
  title: string;
  token: string;
  body: Record<string, unknown>;
}

type Call = (method: string, path: string, token: string, body: unknown, headers: Record<string, string>) => Promise<{ status: number; body: Record<string, any> }>;

/**
 * Sends each cut-off create again. 201 is the deal (made now, or its first answer again); 409
 * `idempotency_key_in_progress` is a key claimed when the server died, before its create committed:
 * it stays for the next retry (the key frees itself after its 60-second lease). Answers the deals
 * the retries acknowledged, and anything else they answered as a problem.
 */
export async function retryCutCreates(cut: CutCreate[], call: Call): Promise<{ acked: Array<{ id: string; title: string; token: string }>; problems: string[]; waiting: number }> {
  const acked: Array<{ id: string; title: string; token: string }> = [];
  const problems: string[] = [];
  const left: CutCreate[] = [];
  for (const c of cut) {
    const r = await call("POST", "/crm/deals", c.token, c.body, { "idempotency-key": c.key });
    if (r.status === 201 && r.body.title === c.title) acked.push({ id: r.body.id, title: c.title, token: c.token });
    else if (r.status === 409 && r.body.code === "idempotency_key_in_progress") left.push(c);
    else problems.push(`the retry of ${c.title} (key ${c.key}) answered ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
  }
  cut.splice(0, cut.length, ...left);
  return { acked, problems, waiting: left.length };
}

/** Where stored keys and deals disagree (see the file's comment). */
export function keyProblems(deals: Iterable<{ id: string; title: string }>, keys: KeyRow[]): string[] {
  const problems: string[] = [];
  const byResource = new Map(keys.filter((k) => k.resource_id !== null).map((k) => [k.resource_id!, k]));
  const ids = new Set<string>();
  const titles = new Map<string, number>();
  for (const d of deals) {
    ids.add(d.id);
    titles.set(d.title, (titles.get(d.title) ?? 0) + 1);
    if (d.title.startsWith("crash deal ") && !byResource.has(d.id)) problems.push(`deal ${d.id} (${d.title}) stored without its Idempotency-Key`);
  }
  for (const k of keys) {
    if ((k.state === "created" || k.state === "done") && (k.resource_id === null || !ids.has(k.resource_id))) {
      problems.push(`key ${k.key} says ${k.state} for ${k.resource_id}, which is not stored`);
    }
  }
  for (const [title, n] of titles) if (n > 1) problems.push(`${title} stored ${n} times`);
  return problems;
}
