/** A confirmation in a native modal <dialog>: focus moves in, Escape cancels, the page is inert. */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

/** A <dialog> ref kept shown as a modal while `open` (showModal makes the page inert; a plain `open` attribute would not). */
function useModalDialog(open: boolean) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal?.();
    if (!open && d.open) d.close();
  }, [open]);
  return ref;
}

export interface ConfirmProps {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

export function ConfirmDialog({ open, title, children, confirmLabel, danger, busy, onConfirm, onCancel }: ConfirmProps) {
  const ref = useModalDialog(open);
  // Several dialogs may share a page (Team: revoke, remove): each title needs its own id.
  const titleId = useId();
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} onCancel={(e) => (e.preventDefault(), onCancel())}>
      <h2 id={titleId}>{title}</h2>
      {children}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class={danger ? "danger" : "primary"} onClick={onConfirm} disabled={busy}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** Any content in a modal dialog (forms: create, edit). */
export function Modal({ open, title, children, onClose }: { open: boolean; title: string; children: ComponentChildren; onClose: () => void }) {
  const ref = useModalDialog(open);
  const titleId = useId();
  return (
    <dialog ref={ref} class="dialog wide" aria-labelledby={titleId} onCancel={(e) => (e.preventDefault(), onClose())}>
      <h2 id={titleId}>{title}</h2>
      {open && children}
    </dialog>
  );
}
