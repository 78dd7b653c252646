/**
 * Compile-time checks of the typed client (tsc -p web, in `bun run typecheck`; never bundled:
 * nothing imports this file). Each `@ts-expect-error` line must fail to compile: a wrong path,
 * path parameter, query or body is an error, and an answer has the document's type.
 */
import { api, href } from "./client";
import type { Deal, ImportJob, Stage } from "./shapes";

export async function wrongCallsDoNotCompile(kind: "deals" | "accounts" | "contacts") {
  // A path the server does not have, or not for this method.
  // @ts-expect-error
  await api.get("/api/v1/crm/deal");
  // @ts-expect-error
  await api.get("/crm/deals");
  // @ts-expect-error
  await api.post("/api/v1/crm/deals/{id}", { path: { id: "d1" } });
  // @ts-expect-error
  await api.delete("/api/v1/tenant");

  // Path parameters: required where the path has them, by their names.
  // @ts-expect-error
  await api.get("/api/v1/crm/deals/{id}");
  // @ts-expect-error
  await api.get("/api/v1/crm/deals/{id}", { path: { deal_id: "d1" } });

  // Query parameters: only the operation's, of their types.
  // @ts-expect-error
  await api.get("/api/v1/crm/deals", { query: { colour: "red" } });
  // @ts-expect-error
  await api.get("/api/v1/crm/deals", { query: { page: "2" } });
  // @ts-expect-error
  await api.get("/api/v1/crm/deals", { query: { sort_by: "colour" } });
  // @ts-expect-error
  await api.get("/api/v1/auth/me", { query: { page: 1 } });
  // @ts-expect-error
  href(`/api/v1/crm/${kind}/export`, { query: { colour: "red" } });

  // Bodies: required where the operation needs one, of its shape.
  // @ts-expect-error
  await api.post("/api/v1/auth/login");
  // @ts-expect-error
  await api.post("/api/v1/auth/login", { body: { email: "a@b.co" } });
  // @ts-expect-error
  await api.post("/api/v1/auth/login", { body: { email: "a@b.co", password: "x", remember: true } });
  // @ts-expect-error
  await api.patch("/api/v1/crm/deals/{id}", { path: { id: "d1" }, body: { title: 42 } });
  // @ts-expect-error
  await api.get("/api/v1/crm/deals", { body: {} });
  // @ts-expect-error
  await api.post(`/api/v1/crm/${kind}/import`, { body: "a,b" });

  // Only creates (operations with an Idempotency-Key) go through create.
  // @ts-expect-error
  await api.create("/api/v1/crm/pipeline-stages/reorder", { body: { ids: [] } });
}

export async function rightCallsCompile(kind: "deals" | "accounts" | "contacts", file: Blob) {
  const deal: Deal = await api.get("/api/v1/crm/deals/{id}", { path: { id: "d1" } });
  const stages: Stage[] = await api.get("/api/v1/crm/pipeline-stages");
  const created: Deal = await api.create("/api/v1/crm/deals", { body: { title: "T", account_id: "a1" } });
  const gone: void = await api.delete("/api/v1/crm/deals/{id}", { path: { id: deal.id } });
  const answer = await api.post(`/api/v1/crm/${kind}/import`, { query: { dry_run: "true" }, csv: file });
  const job: ImportJob | undefined = "status" in answer ? answer : undefined;
  // @ts-expect-error: an answer has the document's fields only
  deal.colour;
  return [stages, created, gone, job, href("/api/v1/audit-log", { query: { format: "csv" } })];
}
