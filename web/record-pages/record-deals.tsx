/**
 * The deals of an account or a contact: the deal list filtered by `account_id` or `contact_id`
 * (exact total, newest first, paged), each title a link to its deal page.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { money } from "../shared/format";
import { Pager } from "../shared/pager";
import { Link } from "../shared/router";
import { ErrorBox, Loading } from "../shared/states";
import { useLoad } from "../shared/use-load";

export function RecordDeals({ filter, name }: { filter: { account_id: string } | { contact_id: string }; name: string }) {
  const [page, setPage] = useState(1);
  const [size, setSize] = useState(20);
  const key = JSON.stringify(filter);
  const list = useLoad((signal) => api.get("/api/v1/crm/deals", { query: { ...filter, page, size }, signal }), [key, page, size]);
  const data = list.data;
  const byContact = "contact_id" in filter;
  return (
    <section class="record-list" aria-labelledby="record-deals-title">
      <h2 id="record-deals-title">Deals</h2>
      {list.error ? <ErrorBox error={list.error} retry={list.reload} /> : null}
      {!data ? (
        list.error ? null : <Loading label="Loading the deals…" />
      ) : data.total === 0 ? (
        <p class="muted">
          {name} has no deals yet. To add one, create a deal on the <Link href="/deals">Deals</Link> screen and choose {byContact ? "this contact" : "this account"} in it.
        </p>
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Deals of {name}</caption>
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Stage</th>
                  <th scope="col" class="num">
                    Value
                  </th>
                  <th scope="col" class="hide-narrow">
                    {byContact ? "Account" : "Contact"}
                  </th>
                </tr>
              </thead>
              <tbody class={list.loading ? "dim" : undefined} aria-busy={list.loading ? "true" : "false"}>
                {data.items.map((d) => (
                  <tr key={d.id}>
                    <td class="title">
                      <Link class="strong" href={`/deals/${encodeURIComponent(d.id)}`}>
                        {d.title}
                      </Link>
                    </td>
                    <td>{d.pipeline_stage_name ?? d.stage}</td>
                    <td class="num nowrap">{money(d.value ?? "0", d.currency ?? "USD")}</td>
                    <td class="hide-narrow">
                      {byContact ? (
                        <Link href={`/accounts/${encodeURIComponent(d.account_id)}`}>{d.account_name}</Link>
                      ) : d.contact_id ? (
                        <Link href={`/contacts/${encodeURIComponent(d.contact_id)}`}>{d.contact_name}</Link>
                      ) : (
                        "—"
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.pages > 1 || data.total > 20 ? (
            <Pager page={page} pages={data.pages} total={data.total} size={size} noun="deals" onPage={setPage} onSize={(s) => (setSize(s), setPage(1))} />
          ) : (
            <p class="muted small">{data.total === 1 ? "1 deal" : `${data.total} deals`}</p>
          )}
        </>
      )}
    </section>
  );
}
