/**
 * The sentence a person reads for a 422 item. The API speaks FastAPI's language ("String should
 * have at least 1 character", "Value error, …") for programs; a person gets what to do about
 * the field, in the words of the form: "Enter a title.", "Choose an account.".
 */
import type { ValidationItem } from "./shapes";

/** A field's name in a sentence: `name` starts one ("Probability must…"), `the` follows a verb ("Enter a title."). */
interface Label {
  name: string;
  the: string;
  /** Chosen from a list (a picker, a select), not typed: "Choose …". */
  choice?: boolean;
}

const LABELS: Record<string, Label> = {
  title: { name: "Title", the: "a title" },
  name: { name: "Name", the: "a name" },
  account_id: { name: "Account", the: "an account", choice: true },
  account_name: { name: "Account", the: "an account name" },
  contact_id: { name: "Contact", the: "a contact", choice: true },
  contact_name: { name: "Contact", the: "a contact name" },
  assigned_to: { name: "Assignee", the: "an assignee", choice: true },
  value: { name: "Value", the: "a value" },
  currency: { name: "Currency", the: "a currency", choice: true },
  stage: { name: "Stage", the: "a stage", choice: true },
  probability: { name: "Probability", the: "a probability" },
  close_date: { name: "Close date", the: "a close date" },
  first_name: { name: "First name", the: "a first name" },
  last_name: { name: "Last name", the: "a last name" },
  email: { name: "Email address", the: "an email address" },
  password: { name: "Password", the: "a password" },
  new_password: { name: "New password", the: "a new password" },
  current_password: { name: "Current password", the: "your current password" },
  full_name: { name: "Name", the: "a name" },
  tenant_name: { name: "Organization name", the: "the organization's name" },
  subdomain: { name: "Workspace address", the: "a workspace address" },
  key: { name: "Key", the: "a key" },
  color: { name: "Color", the: "a color", choice: true },
  client_id: { name: "Client ID", the: "the client ID" },
  client_secret: { name: "Client secret", the: "the client secret" },
  issuer: { name: "Issuer URL", the: "the issuer URL" },
};

export function labelOf(field: string): Label {
  const known = LABELS[field];
  if (known) return known;
  const words = field.replace(/_id$/, " ID").replace(/_/g, " ").trim() || "this field";
  return { name: words[0]!.toUpperCase() + words.slice(1), the: `the ${words}` };
}

const sentence = (s: string) => {
  const t = s.trim();
  return t ? t[0]!.toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".") : t;
};

/** Library wording that says nothing to a person: replaced by "Check …" when nothing better is known. */
const TECHNICAL = /^(Input should|String should|List should|Field required|Extra inputs)/;

/** The sentence for one 422 item. The field is the last name in its `loc` (an import row's column too). */
export function plainMessage(item: Pick<ValidationItem, "loc" | "msg" | "type"> & { ctx?: unknown }): string {
  const field = [...item.loc].reverse().find((p): p is string => typeof p === "string" && p !== "body" && p !== "query" && p !== "row") ?? "";
  const l = labelOf(field);
  const ctx = (item.ctx ?? {}) as Record<string, unknown>;
  const ask = l.choice ? `Choose ${l.the}.` : `Enter ${l.the}.`;
  switch (item.type) {
    case "missing":
      return ask;
    case "string_too_short":
      return Number(ctx.min_length ?? 1) <= 1 ? ask : `${l.name} needs at least ${ctx.min_length} characters.`;
    case "string_too_long":
      return `${l.name} can have at most ${ctx.max_length} characters.`;
    case "string_pattern_mismatch":
      if (field === "currency") return "Choose a currency from the list.";
      return `${l.name} cannot be blank, hold line breaks or use characters that are not allowed here.`;
    case "int_parsing":
    case "int_from_float":
    case "int_type":
      return `${l.name} must be a whole number.`;
    case "float_parsing":
    case "float_type":
      return `${l.name} must be a number.`;
    case "greater_than_equal":
      return `${l.name} must be ${ctx.ge} or more.`;
    case "less_than_equal":
      return `${l.name} must be ${ctx.le} or less.`;
    case "greater_than":
      return `${l.name} must be more than ${ctx.gt}.`;
    case "less_than":
      return `${l.name} must be less than ${ctx.lt}.`;
    case "literal_error":
      return l.choice ? `Choose ${l.the} from the list.` : `${l.name} is not one of the allowed values.`;
  }
  if (/^Input should be a valid date/.test(item.msg)) return `Enter ${l.the} as a date, e.g. 2030-06-30.`;
  if (item.msg.startsWith("Value error, ")) return sentence(item.msg.slice("Value error, ".length));
  if (TECHNICAL.test(item.msg)) return `Check the ${l.name.toLowerCase()}.`;
  return sentence(item.msg);
}
