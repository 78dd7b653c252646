/** The organization's pipeline stages, loaded once and shared by the deal list, its form and the pipeline screen. */
import { useEffect, useState } from "preact/hooks";
import { api, type Stage } from "../api/client";

let cached: Promise<Stage[]> | null = null;
const listeners = new Set<() => void>();

export const byPosition = (a: Stage, b: Stage) => a.position - b.position || a.name.localeCompare(b.name);

export function loadStages(): Promise<Stage[]> {
  cached ??= api.get("/api/v1/crm/pipeline-stages").then((s) => [...s].sort(byPosition));
  cached.catch(() => (cached = null));
  return cached;
}

/** After a stage is added: every screen showing stages reloads them. */
export function stagesChanged(): void {
  cached = null;
  for (const l of listeners) l();
}

export function useStages(): { stages: Stage[] | undefined; error: unknown; reload: () => void } {
  const [stages, setStages] = useState<Stage[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  useEffect(() => {
    let live = true;
    loadStages().then(
      (s) => live && (setStages(s), setError(null)),
      (e) => live && setError(e),
    );
    return () => void (live = false);
  }, [tick]);
  return { stages, error, reload: () => ((cached = null), setTick((n) => n + 1)) };
}
