/** One deal on the board: its title, account, value and assignee, dragged or moved with "Move to…". */
import type { Deal, Stage } from "../../api/client";
import { daysInStage, money } from "../../shared/format";
import { Link } from "../../shared/router";

export interface CardProps {
  deal: Deal;
  stages: Stage[];
  /** Its move is on its way to the server. */
  moving: boolean;
  onMove: (d: Deal, to: string) => void;
  onDragStart: (d: Deal) => void;
}

export function Card({ deal, stages, moving, onMove, onDragStart }: CardProps) {
  const others = stages.filter((s) => s.key !== deal.stage);
  return (
    <li
      class={`board-card${moving ? " moving" : ""}`}
      draggable
      data-deal-id={deal.id}
      onDragStart={(e) => {
        e.dataTransfer?.setData("text/plain", deal.id);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
        onDragStart(deal);
      }}
    >
      {/* The title opens the deal's page, as the table's does. */}
      <Link class="link strong card-title" href={`/deals/${encodeURIComponent(deal.id)}`} draggable={false}>
        {deal.title}
      </Link>
      <p class="card-account">{deal.account_name ?? "No account"}</p>
      <p class="card-facts">
        <span class="card-value">{money(deal.value ?? "0.00", deal.currency ?? "USD")}</span>
        <span class="card-assignee">{deal.assignee_name || deal.assignee_email || "Unassigned"}</span>
      </p>
      <p class="card-days muted">{daysInStage(deal.stage_changed_at ?? deal.updated_at)}</p>
      <label class="visually-hidden" for={`move-${deal.id}`}>
        Move “{deal.title}” to another stage
      </label>
      <select
        id={`move-${deal.id}`}
        class="card-move"
        value=""
        disabled={moving}
        onChange={(e) => {
          const to = (e.target as HTMLSelectElement).value;
          (e.target as HTMLSelectElement).value = "";
          if (to) onMove(deal, to);
        }}
      >
        <option value="" disabled>
          Move to…
        </option>
        {others.map((s) => (
          <option key={s.key} value={s.key}>
            {s.name}
          </option>
        ))}
      </select>
    </li>
  );
}
