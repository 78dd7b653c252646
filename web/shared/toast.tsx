/** Short confirmations ("Invitation sent") in a polite live region, gone after a few seconds. */
import { useEffect, useState } from "preact/hooks";

interface Toast {
  id: number;
  text: string;
  kind: "ok" | "error";
}

let items: Toast[] = [];
let next = 1;
const listeners = new Set<() => void>();
const changed = () => {
  for (const l of listeners) l();
};

export function toast(text: string, kind: Toast["kind"] = "ok", ms = 5000): void {
  const t = { id: next++, text, kind };
  items = [...items, t];
  changed();
  setTimeout(() => {
    items = items.filter((x) => x !== t);
    changed();
  }, ms);
}

export function Toasts() {
  const [, set] = useState(0);
  useEffect(() => {
    const l = () => set((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {items.map((t) => (
        <p key={t.id} class={`toast ${t.kind}`}>
          {t.text}
        </p>
      ))}
    </div>
  );
}
