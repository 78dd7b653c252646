/**
 * Lists that follow what the user types: a debouncer (one call once typing pauses), a runner
 * where only the latest call's answer counts (older ones are aborted and ignored), and a hook
 * that keeps the last rows on screen while the next answer loads (no flicker: the screen dims
 * them via `loading`).
 */
import { useEffect, useRef, useState } from "preact/hooks";

export interface Timers {
  set: (f: () => void, ms: number) => unknown;
  clear: (t: unknown) => void;
}
const realTimers: Timers = { set: (f, ms) => setTimeout(f, ms), clear: (t) => clearTimeout(t as ReturnType<typeof setTimeout>) };

/** Calls the last scheduled function once `ms` have passed without another schedule. */
export function debouncer(ms: number, timers: Timers = realTimers) {
  let handle: unknown;
  let pending: (() => void) | null = null;
  const fire = () => {
    const f = pending;
    pending = null;
    handle = undefined;
    f?.();
  };
  return {
    schedule(f: () => void): void {
      if (handle !== undefined) timers.clear(handle);
      pending = f;
      handle = timers.set(fire, ms);
    },
    /** Run the pending call now (Enter in a search box). */
    flush(): void {
      if (handle !== undefined) timers.clear(handle);
      fire();
    },
    cancel(): void {
      if (handle !== undefined) timers.clear(handle);
      handle = undefined;
      pending = null;
    },
    get pending(): boolean {
      return pending !== null;
    },
  };
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown } | { stale: true };

/**
 * Runs loads one after another's start: a new run aborts the one before, and an answer (or
 * failure) of any run that is no longer the latest comes back as `stale`, whatever order the
 * answers arrive in.
 */
export function latestOnly() {
  let seq = 0;
  let ctl: AbortController | null = null;
  return {
    async run<T>(load: (signal: AbortSignal) => Promise<T>): Promise<Outcome<T>> {
      const mine = ++seq;
      ctl?.abort();
      const c = new AbortController();
      ctl = c;
      try {
        const value = await load(c.signal);
        return mine === seq ? { ok: true, value } : { stale: true };
      } catch (error) {
        return mine === seq && !c.signal.aborted ? { ok: false, error } : { stale: true };
      }
    },
    abort(): void {
      seq++;
      ctl?.abort();
    },
  };
}

export interface LiveData<T> {
  /** The latest answer; the previous one stays while the next loads. */
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Loads whenever `key` changes (a query string), the latest key's answer winning. */
export function useLive<T>(key: string, load: (signal: AbortSignal) => Promise<T>): LiveData<T> {
  // `answered`: the key (and reload) the shown answer is for. Until it matches, the list is
  // loading, from the very render that shows the new key (no frame of old rows looking current).
  const [state, setState] = useState<{ data: T | undefined; error: unknown; answered: string | null }>({ data: undefined, error: null, answered: null });
  const [tick, setTick] = useState(0);
  const runner = useRef(latestOnly());
  const loadRef = useRef(load);
  loadRef.current = load;
  const wanted = `${tick}|${key}`;
  useEffect(() => {
    void runner.current.run((signal) => loadRef.current(signal)).then((o) => {
      if ("stale" in o) return;
      setState((s) => (o.ok ? { data: o.value, error: null, answered: wanted } : { data: s.data, error: o.error, answered: wanted }));
    });
  }, [wanted]);
  useEffect(() => () => runner.current.abort(), []);
  return { data: state.data, error: state.error, loading: state.answered !== wanted, reload: () => setTick((n) => n + 1) };
}
