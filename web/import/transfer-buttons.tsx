/**
 * Export and import beside a list's title: "Export CSV" downloads what the list shows (its search,
 * filters and order, every page) through a plain link, which the session cookie goes with;
 * "Import" opens the import screen for this kind (admins: only they may import).
 */
import "./import.css";
import { href, type TransferKind } from "../api/client";
import type { Query } from "../api/operations";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";

type ExportQuery = Query<"get", `/api/v1/crm/${TransferKind}/export`>;

export function TransferButtons({ kind, query = {} }: { kind: TransferKind; query?: ExportQuery }) {
  const admin = useSession().me?.user.role === "admin";
  // The list's paging is no part of an export.
  const { page: _p, size: _s, ...rest } = query;
  return (
    <span class="transfer-buttons">
      <a class="button" href={href(`/api/v1/crm/${kind}/export`, { query: rest })} download>
        Export CSV
      </a>
      {admin ? (
        <Link class="button" href={`/import?kind=${kind}`}>
          Import
        </Link>
      ) : null}
    </span>
  );
}
