/** A read-only value with a Copy button (the redirect URI an admin registers at the provider). */
import { useId, useState } from "preact/hooks";

export function CopyField({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const id = useId();
  const [said, setSaid] = useState("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setSaid("Copied.");
    } catch {
      // No clipboard (an insecure origin, a refusal): select it so Ctrl+C works.
      const input = document.getElementById(id) as HTMLInputElement | null;
      input?.focus();
      input?.select();
      setSaid("Select and copy it by hand (Ctrl+C).");
    }
  };
  return (
    <div class="field copy-field">
      <label for={id}>{label}</label>
      <div class="row">
        <input id={id} readOnly value={value} class="mono" aria-describedby={hint ? `${id}-hint` : undefined} onFocus={(e) => (e.target as HTMLInputElement).select()} />
        <button type="button" onClick={() => void copy()}>
          Copy<span class="visually-hidden"> {label}</span>
        </button>
      </div>
      {hint && <p class="hint" id={`${id}-hint`}>{hint}</p>}
      <p class="hint" role="status">{said}</p>
    </div>
  );
}
