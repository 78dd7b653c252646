/** One stage's column: its name, exact count and sums (the summary), and its cards, more loaded as it scrolls. */
import { useEffect, useRef } from "preact/hooks";
import type { Deal, Stage } from "../../api/client";
import { money } from "../../shared/format";
import { errorMessage } from "../../shared/states";
import { Card } from "./card";
import type { Group } from "./moves";

export interface ColumnCards {
  items: Deal[];
  /** Pages read so far (of the stage's deals, newest first). */
  pages: number;
  /** Every card is shown. */
  done: boolean;
  loading: boolean;
  error: unknown;
}

export interface ColumnProps {
  stage: Stage;
  group: Group | undefined;
  cards: ColumnCards | undefined;
  stages: Stage[];
  moving: Set<string>;
  /** A card is being dragged over this column. */
  dropping: boolean;
  onMore: () => void;
  onMove: (d: Deal, to: string) => void;
  onDragStart: (d: Deal) => void;
  onDragOver: (over: boolean) => void;
  onDrop: () => void;
}

export function Column({ stage, group, cards, stages, moving, dropping, onMore, onMove, onDragStart, onDragOver, onDrop }: ColumnProps) {
  const list = useRef<HTMLUListElement>(null);
  const end = useRef<HTMLLIElement>(null);
  const more = useRef(onMore);
  more.current = onMore;
  // Near the end of the column's list (its own scroller), the next page loads.
  useEffect(() => {
    if (!end.current || typeof IntersectionObserver === "undefined") return;
    const o = new IntersectionObserver((seen) => seen.some((e) => e.isIntersecting) && more.current(), { root: list.current, rootMargin: "200px" });
    o.observe(end.current);
    return () => o.disconnect();
  }, [cards?.done, cards?.loading]);
  const id = `column-${stage.key}`;
  const count = group?.count ?? 0;
  return (
    <section
      class={`board-column${dropping ? " dropping" : ""}`}
      aria-labelledby={id}
      data-stage={stage.key}
      onDragOver={(e) => {
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
        onDragOver(true);
      }}
      onDragLeave={(e) => {
        if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) onDragOver(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        onDrop();
      }}
    >
      <header class="column-head" style={{ borderTopColor: stage.color }}>
        <h2 id={id}>{stage.name}</h2>
        <p class="column-count">{group ? `${count} ${count === 1 ? "deal" : "deals"}` : "Counting…"}</p>
        {group && group.values.length > 0 && (
          <ul class="column-sums" aria-label={`Value of the ${stage.name} deals`}>
            {group.values.map((v) => (
              <li key={v.currency}>{money(v.sum, v.currency)}</li>
            ))}
          </ul>
        )}
      </header>
      <ul class="column-cards" ref={list} aria-label={`${stage.name} deals`}>
        {cards?.items.map((d) => <Card key={d.id} deal={d} stages={stages} moving={moving.has(d.id)} onMove={onMove} onDragStart={onDragStart} />)}
        {cards && !cards.loading && cards.items.length === 0 && !cards.error && <li class="column-empty muted">No deals in this stage.</li>}
        <li ref={end} class="column-end" aria-hidden={cards?.done ? "true" : undefined}>
          {cards?.error ? (
            <p class="error">
              {errorMessage(cards.error)}{" "}
              <button type="button" onClick={onMore}>
                Try again
              </button>
            </p>
          ) : !cards || cards.loading ? (
            <p class="muted">Loading deals…</p>
          ) : !cards.done ? (
            <button type="button" class="small" onClick={onMore}>
              Show more {stage.name} deals
            </button>
          ) : null}
        </li>
      </ul>
    </section>
  );
}
