/**
 * The deal list's keyboard shortcuts: `/` search, `n` new deal, `j`/`k` next/previous row,
 * `x` ticks the row for a bulk change, `Enter` opens the row (its title), `?` this list. Never while typing in a field (an input, a
 * select, a text area, anything editable), with Ctrl, Alt or Meta held (the browser's and the
 * screen reader's own shortcuts), or while a dialog is open.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { Modal } from "../shared/dialog";

export const SHORTCUTS: Array<[string, string]> = [
  ["/", "Search deals"],
  ["n", "New deal"],
  ["j", "Next deal"],
  ["k", "Previous deal"],
  ["x", "Select or unselect the deal"],
  ["Enter", "Open the deal"],
  ["?", "Show these shortcuts"],
];

/** True when a key press is someone typing, not a shortcut. */
export function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  if (!t || typeof t.closest !== "function") return false;
  return t.isContentEditable || t.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']") !== null;
}

/** The rows' "open" buttons, in order: the first button or link of each body row. */
const rowOpeners = (): HTMLElement[] =>
  [...document.querySelectorAll<HTMLTableRowElement>("table.deals tbody tr")].map((tr) => tr.querySelector<HTMLElement>("td a, td button")).filter((b): b is HTMLElement => b !== null);

export function useDealShortcuts(actions: { newDeal: () => void }) {
  const [help, setHelp] = useState(false);
  // The latest actions, without adding and removing the listener on every render.
  const latest = useRef(actions);
  latest.current = actions;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e)) return;
      if (document.querySelector("dialog[open]")) return;
      // Shift makes "?"; any other shifted key is not a shortcut.
      if (e.shiftKey && e.key !== "?") return;
      const rows = rowOpeners();
      const at = rows.findIndex((b) => b.closest("tr")?.contains(document.activeElement));
      const focusRow = (i: number) => {
        const b = rows[Math.max(0, Math.min(rows.length - 1, i))];
        b?.focus();
        b?.closest("tr")?.scrollIntoView?.({ block: "nearest" });
      };
      switch (e.key) {
        case "/":
          document.querySelector<HTMLInputElement>(".deals-screen input[type='search']")?.focus();
          break;
        case "n":
          latest.current.newDeal();
          break;
        case "j":
          if (!rows.length) return;
          focusRow(at < 0 ? 0 : at + 1);
          break;
        case "k":
          if (!rows.length) return;
          focusRow(at < 0 ? 0 : at - 1);
          break;
        case "x": {
          // The current row's box, for a bulk change; focus stays on the row.
          const box = at < 0 ? null : rows[at]!.closest("tr")?.querySelector<HTMLInputElement>("input[type='checkbox']");
          if (!box || box.disabled) return;
          box.click();
          rows[at]!.focus();
          break;
        }
        case "Enter": {
          // On a control (the title's link, Edit, Delete, the stage picker) Enter does what that control does.
          const active = document.activeElement;
          if (at < 0 || (active instanceof HTMLElement && active.closest("a, button, select, input, textarea, summary") !== null)) return;
          rows[at]!.click();
          break;
        }
        case "?":
          setHelp(true);
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return { help, open: () => setHelp(true), closeHelp: () => setHelp(false) };
}

export function ShortcutsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Modal open={open} title="Keyboard shortcuts" onClose={onClose}>
      <dl class="shortcuts">
        {SHORTCUTS.map(([key, what]) => (
          <div key={key}>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <p class="hint">Shortcuts do nothing while you type in a field.</p>
      <div class="actions">
        <button type="button" class="primary" onClick={onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}
