/**
 * The next step's size after one of `size` took `tookMs`: grows by half at most a step (a row's
 * cost varies: new counter rows, page splits, a cold cache), shrinks at once to what the target
 * allows. Imports, bulk changes, exports and the live seed size their steps by it, so a step costs
 * about the same however the machine is loaded and however big the rows are.
 */
export function nextStepSize(size: number, tookMs: number, bounds: { min: number; max: number; targetMs: number }): number {
  return Math.max(bounds.min, Math.min(bounds.max, Math.round(size * 1.5), Math.round((size * bounds.targetMs) / Math.max(0.5, tookMs))));
}
