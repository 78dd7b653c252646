/** The end of every CRM form: its error that belongs to no field, then Cancel and the submit button. */
export function FormFooter({ error, busy, busyLabel, label, onCancel }: { error: string | null; busy: boolean; busyLabel: string; label: string; onCancel: () => void }) {
  return (
    <>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? busyLabel : label}
        </button>
      </div>
    </>
  );
}
