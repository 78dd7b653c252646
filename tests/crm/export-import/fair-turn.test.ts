import { describe, expect, test } from "bun:test";
import { fairTurn } from "../../../src/crm/export-import/import-upload";

/** Work queued on the event loop: `steps` turns, each holding the thread about 1 ms. */
function busyChain(steps: number): { done: () => number } {
  let n = 0;
  const step = () => {
    const until = performance.now() + 1;
    while (performance.now() < until);
    if (++n < steps) setImmediate(step);
  };
  setImmediate(step);
  return { done: () => n };
}

describe("fairTurn: an import batch's turn lets waiting work run to its end", () => {
  test("waits while other work takes turns, then comes back", async () => {
    const chain = busyChain(10);
    await fairTurn(2_000);
    expect(chain.done()).toBe(10);
  });

  test("stops at its cap when the other work never ends", async () => {
    let stop = false;
    const spin = () => {
      const until = performance.now() + 2;
      while (performance.now() < until);
      if (!stop) setImmediate(spin);
    };
    setImmediate(spin);
    const started = performance.now();
    await fairTurn(30);
    stop = true;
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  test("costs a turn or so when nothing waits", async () => {
    const started = performance.now();
    await fairTurn();
    expect(performance.now() - started).toBeLessThan(60);
  });
});
