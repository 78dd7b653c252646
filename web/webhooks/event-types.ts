/** The event types a webhook can ask for, grouped as the picker shows them (the server's own list). */
import { EVENT_TYPES } from "../../src/events/repo";

const GROUPS: Array<{ prefix: string; label: string }> = [
  { prefix: "deal.", label: "Deals" },
  { prefix: "account.", label: "Accounts" },
  { prefix: "contact.", label: "Contacts" },
  { prefix: "pipeline_stage.", label: "Pipeline" },
  { prefix: "import.", label: "Imports" },
  { prefix: "member.", label: "Members" },
  { prefix: "invitation.", label: "Invitations" },
  { prefix: "user.", label: "Sign-in and security" },
  { prefix: "session.", label: "Sign-in and security" },
];

/** Each group's label and its types, in the server's order. */
export function eventGroups(): Array<{ label: string; types: string[] }> {
  const out: Array<{ label: string; types: string[] }> = [];
  for (const type of EVENT_TYPES) {
    const label = GROUPS.find((g) => type.startsWith(g.prefix))?.label ?? "Other";
    let group = out.find((g) => g.label === label);
    if (!group) out.push((group = { label, types: [] }));
    group.types.push(type);
  }
  return out;
}

/** "deal.stage_changed" → "stage changed". */
export const typeLabel = (type: string): string => type.slice(type.indexOf(".") + 1).replace(/_/g, " ");
