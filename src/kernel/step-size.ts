/**
 * The next step's size after one of `size` took `tookMs`: grows by half at most a step (a row's
 * cost varies: new counter rows, page splits, a cold cache), shrinks at once to what the target
 * allows. Imports, bulk changes, exports and the live seed size their steps by it, so a step costs
 * about the same however the machine is loaded and however big the rows are.
 */
export function nextStepSize(size: number, tookMs: number, bounds: { min: number; max: number; targetMs: number }): number {
  return Math.max(bounds.min, Math.min(bounds.max, Math.round(size * 1.5), Math.round((size * bounds.targetMs) / Math.max(0.5, tookMs))));
}

/**
 * Steps sized by this thread's CPU time for each (`first` rows first): what runs on this thread is
 * what a neighbour's request waits for (SQLite's reads run here; PostgreSQL's rows are turned into
 * lines or maps here). The exports' steps and the imports' reads of names use it.
 */
export function cpuSizedSteps(bounds: { first: number; min: number; max: number; targetMs: number }) {
  let size = bounds.first;
  return {
    async step<T>(work: (size: number) => Promise<T>): Promise<T> {
      const cpu = process.threadCpuUsage();
      const out = await work(size);
      const spent = process.threadCpuUsage(cpu);
      size = nextStepSize(size, (spent.user + spent.system) / 1000, bounds);
      return out;
    },
  };
}
