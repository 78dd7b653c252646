/** The loading, empty and error states every screen shows the same way. */
import type { ComponentChildren } from "preact";
import { ApiError } from "../api/client";

export const Loading = ({ label = "Loading…" }: { label?: string }) => (
  <p class="state loading" role="status" aria-live="polite">
    {label}
  </p>
);

export const Empty = ({ children }: { children: ComponentChildren }) => <div class="state empty">{children}</div>;

/** A sentence for any failure: the server's own `detail`, or what a network failure means. */
export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.code === "rate_limited") return e.retryAfter ? `Too many attempts. Try again in ${waitText(e.retryAfter)}.` : "Too many attempts. Try again later.";
    return e.detail;
  }
  if (e instanceof TypeError) return "The server could not be reached. Check your connection and try again.";
  return e instanceof Error ? e.message : String(e);
}

export function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const m = Math.ceil(seconds / 60);
  return `${m} minute${m === 1 ? "" : "s"}`;
}

export const ErrorBox = ({ error, retry }: { error: unknown; retry?: () => void }) => (
  <div class="state error-box" role="alert">
    <p>{errorMessage(error)}</p>
    {retry && (
      <button type="button" onClick={retry}>
        Try again
      </button>
    )}
  </div>
);
