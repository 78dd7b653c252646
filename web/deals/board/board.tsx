/**
 * The deals board: one column per pipeline stage, in order, each headed by its exact count and
 * value per currency (GET /crm/deals/summary) and filled from the deal list filtered by its stage,
 * a page at a time as it scrolls; the same filters and search as the table. A card moves by drag
 * and drop or with its "Move to…" list: at once on screen, then sent as the deal's stage change,
 * said in a live region, and put back with a sentence saying so if the server refuses.
 */
import "./board.css";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, queryString, type Deal, type DealSummary, type Stage } from "../../api/client";
import { useLive } from "../../shared/live-list";
import { ErrorBox, errorMessage } from "../../shared/states";
import { toast } from "../../shared/toast";
import { type DealView, filterQuery } from "../view";
import { Column, type ColumnCards } from "./column";
import { movedInSummary } from "./moves";

/** Cards read at a time per column. */
export const BOARD_PAGE = 20;

export interface BoardProps {
  view: DealView;
  stages: Stage[];
  /** Changes when deals changed elsewhere on the screen (created, edited, deleted): everything reloads. */
  refresh: number;
}

const without = (items: Deal[], id: string) => items.filter((d) => d.id !== id);

export function Board({ view, stages, refresh }: BoardProps) {
  const filters = filterQuery(view);
  const key = `${refresh}|${queryString(filters as never)}`;
  const shown = view.stages.length ? stages.filter((s) => view.stages.includes(s.key)) : stages;

  const live = useLive(key, (signal) => api.get("/api/v1/crm/deals/summary", { query: filters, signal }));
  const [summary, setSummary] = useState<DealSummary | undefined>(undefined);
  useEffect(() => setSummary(live.data), [live.data]);

  const [cols, setCols] = useState<Record<string, ColumnCards>>({});
  const colsRef = useRef(cols);
  colsRef.current = cols;
  // Answers for an older set of filters are dropped.
  const generation = useRef(0);
  const setCol = (stage: string, f: (c: ColumnCards) => ColumnCards) =>
    setCols((all) => ({ ...all, [stage]: f(all[stage] ?? { items: [], pages: 0, done: false, loading: false, error: null }) }));

  const load = (stage: string) => {
    const c = colsRef.current[stage];
    if (c && (c.loading || c.done)) return;
    const gen = generation.current;
    const page = (c?.pages ?? 0) + 1;
    setCol(stage, (x) => ({ ...x, loading: true, error: null }));
    api.get("/api/v1/crm/deals", { query: { ...filters, stage: [stage], page, size: BOARD_PAGE } }).then(
      (p) => {
        if (gen !== generation.current) return;
        setCol(stage, (x) => {
          // A card moved in meanwhile is not listed twice.
          const seen = new Set(x.items.map((d) => d.id));
          return { items: [...x.items, ...p.items.filter((d) => !seen.has(d.id))], pages: page, done: page >= p.pages, loading: false, error: null };
        });
      },
      (error) => gen === generation.current && setCol(stage, (x) => ({ ...x, loading: false, error })),
    );
  };

  useEffect(() => {
    generation.current++;
    colsRef.current = {};
    setCols({});
    for (const s of shown) load(s.key);
  }, [key, shown.map((s) => s.key).join("\n")]);

  const [moving, setMoving] = useState<Set<string>>(new Set());
  const [said, setSaid] = useState("");
  const dragged = useRef<Deal | null>(null);
  const [over, setOver] = useState<string | null>(null);

  const move = async (deal: Deal, to: string) => {
    const from = deal.stage ?? "";
    const target = stages.find((s) => s.key === to);
    if (from === to || !target || moving.has(deal.id)) return;
    const fromName = stages.find((s) => s.key === from)?.name ?? from;
    const at = colsRef.current[from]?.items.findIndex((d) => d.id === deal.id) ?? -1;
    const moved: Deal = { ...deal, stage: to, pipeline_stage_id: target.id, pipeline_stage_name: target.name, pipeline_stage_color: target.color };
    const visible = shown.some((s) => s.key === to);
    setCol(from, (c) => ({ ...c, items: without(c.items, deal.id) }));
    if (visible) setCol(to, (c) => ({ ...c, items: [moved, ...without(c.items, deal.id)] }));
    setSummary((s) => s && { ...movedInSummary(s, deal, from, to), total: visible ? s.total : s.total - 1 });
    setMoving((m) => new Set(m).add(deal.id));
    setSaid(`Moved “${deal.title}” from ${fromName} to ${target.name}.`);
    try {
      const saved = await api.patch("/api/v1/crm/deals/{id}", { path: { id: deal.id }, body: { stage: to } });
      if (visible) setCol(to, (c) => ({ ...c, items: c.items.map((d) => (d.id === saved.id ? saved : d)) }));
    } catch (e) {
      setCol(to, (c) => ({ ...c, items: without(c.items, deal.id) }));
      setCol(from, (c) => {
        const items = without(c.items, deal.id);
        items.splice(at < 0 ? 0 : Math.min(at, items.length), 0, deal);
        return { ...c, items };
      });
      setSummary((s) => s && { ...movedInSummary(s, deal, to, from), total: visible ? s.total : s.total + 1 });
      const sentence = `“${deal.title}” could not be moved to ${target.name}, so it is back in ${fromName}. ${errorMessage(e)}`;
      setSaid(sentence);
      toast(sentence, "error");
    } finally {
      setMoving((m) => {
        const n = new Set(m);
        n.delete(deal.id);
        return n;
      });
    }
  };

  const groups = new Map(summary?.groups.map((g) => [g.key, g]));
  return (
    <div class="board-wrap">
      {live.error ? <ErrorBox error={live.error} retry={live.reload} /> : null}
      <p class="board-total muted" aria-live="polite">
        {summary ? `${summary.total} ${summary.total === 1 ? "deal" : "deals"} on the board.` : "Counting deals…"} Drag a card to another column, or use its “Move to…” list.
      </p>
      <p class="visually-hidden" role="status" aria-live="polite">
        {said}
      </p>
      <div class="board" aria-label="Deals by stage" role="region">
        {shown.map((s) => (
          <Column
            key={s.key}
            stage={s}
            group={groups.get(s.key)}
            cards={cols[s.key]}
            stages={stages}
            moving={moving}
            dropping={over === s.key}
            onMore={() => load(s.key)}
            onMove={(d, to) => void move(d, to)}
            onDragStart={(d) => (dragged.current = d)}
            onDragOver={(on) => setOver(on ? s.key : (o) => (o === s.key ? null : o))}
            onDrop={() => {
              setOver(null);
              const d = dragged.current;
              dragged.current = null;
              if (d) void move(d, s.key);
            }}
          />
        ))}
      </div>
    </div>
  );
}
