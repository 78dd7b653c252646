/**
 * Export and import beside a list's title: "Export CSV" downloads what the list shows (its search,
 * filters and order, every page) through a plain link, which the session cookie goes with;
 * "Import" opens the import screen for this kind (admins: only they may import).
 */
import "./import.css";
import { exportUrl, type TransferKind } from "../api/client";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";

type Query = Parameters<typeof exportUrl>[1];

export function TransferButtons({ kind, query = {} }: { kind: TransferKind; query?: object }) {
  const admin = useSession().me?.user.role === "admin";
  // The list's paging is no part of an export.
  const { page: _p, size: _s, ...rest } = (query ?? {}) as Record<string, unknown>;
  return (
    <span class="transfer-buttons">
      <a class="button" href={exportUrl(kind, rest as Query)} download>
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
