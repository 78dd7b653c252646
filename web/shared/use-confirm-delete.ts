import { useState } from "preact/hooks";

/**
 * A record's delete behind a confirmation dialog (deals, accounts, contacts): which record is
 * asked about, the request under way, and what it answered when it failed (shown in the dialog,
 * forgotten when another record is asked about). `deleted` runs after the server said yes.
 */
export function useConfirmDelete<T>(remove: (record: T) => Promise<unknown>, deleted: (record: T) => void) {
  const [record, setRecord] = useState<T | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return {
    record,
    busy,
    error,
    ask(r: T) {
      setError(null);
      setRecord(r);
    },
    cancel: () => setRecord(null),
    async confirm() {
      if (record === null) return;
      setBusy(true);
      try {
        await remove(record);
        setRecord(null);
        deleted(record);
      } catch (e) {
        setError(e);
      } finally {
        setBusy(false);
      }
    },
  };
}
