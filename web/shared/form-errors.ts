/**
 * A failed save, split for a form: each 422 item beside the field its `loc` names (the first
 * segment after "body"), everything else (other 422 items, a 404 for a linked record, a 409,
 * a network failure) as one sentence above the buttons.
 */
import { ApiError } from "../api/client";
import { errorMessage } from "./states";

export interface FormErrors {
  fields: Record<string, string>;
  general: string | null;
}

export const NO_ERRORS: FormErrors = { fields: {}, general: null };

/**
 * `fields`: the form's field names as the API spells them. `byDetail`: a non-422 answer whose
 * detail belongs to a field (the server's 404 "Account not found." → account_id).
 */
export function formErrors(e: unknown, fields: readonly string[], byDetail: Record<string, string> = {}): FormErrors {
  if (!(e instanceof ApiError)) return { fields: {}, general: errorMessage(e) };
  if (e.items.length === 0) {
    const field = byDetail[e.detail];
    return field ? { fields: { [field]: e.detail }, general: null } : { fields: {}, general: errorMessage(e) };
  }
  const out: Record<string, string> = {};
  const rest: string[] = [];
  for (const item of e.items) {
    const where = item.loc[0] === "body" ? item.loc.slice(1) : item.loc;
    const name = String(where[0] ?? "");
    // The messages are sentences naming their field already (api/messages.ts); one of each.
    if (fields.includes(name)) out[name] = !out[name] ? item.msg : out[name].includes(item.msg) ? out[name] : `${out[name]} ${item.msg}`;
    else if (!rest.includes(item.msg)) rest.push(item.msg);
  }
  return { fields: out, general: rest.length ? rest.join(" ") : null };
}
