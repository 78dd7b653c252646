import { toIso } from "../kernel/ids";
import type { DealJoined } from "./deals-repo";
import { type AccountRead, type ContactRead, type DealRead, type StageRead, contactName } from "./model";
import { formatCents } from "./money";
import type { AccountRow, ContactRow, PipelineStageRow } from "./repo";

/** Stored rows → what the API answers (times in ISO 8601, value as exact decimal text). */
export const toDealRead = (d: DealJoined): DealRead => ({
  id: d.id,
  tenant_id: d.tenant_id,
  title: d.title,
  account_id: d.account_id,
  value: formatCents(d.value_cents),
  currency: d.currency,
  stage: d.stage,
  close_date: d.close_date,
  probability: d.probability,
  assigned_to: d.assigned_to,
  notes: d.notes,
  custom_data: d.custom_data === null ? null : (JSON.parse(d.custom_data) as Record<string, unknown>),
  contact_id: d.contact_id,
  pipeline_stage_id: d.stage_id,
  pipeline_stage_name: d.stage_name,
  pipeline_stage_color: d.stage_color,
  is_won: d.is_won === 1,
  is_lost: d.is_lost === 1,
  account_name: d.account_name,
  contact_name: d.contact_name,
  assignee_name: d.assignee_name,
  assignee_email: d.assignee_email,
  created_at: toIso(d.created_at),
  updated_at: toIso(d.updated_at),
  // A deal last written before stage times were kept entered its stage at its last write at the latest.
  stage_changed_at: toIso(d.stage_changed_at ?? d.updated_at),
});

export const toStageRead = (s: PipelineStageRow): StageRead => ({
  id: s.id,
  tenant_id: s.tenant_id,
  key: s.key,
  name: s.name,
  color: s.color,
  position: s.position,
  probability: s.probability,
  is_won: s.is_won === 1,
  is_lost: s.is_lost === 1,
  created_at: toIso(s.created_at),
});

export const toAccountRead = (a: AccountRow): AccountRead => ({
  id: a.id,
  tenant_id: a.tenant_id,
  name: a.name,
  domain: a.domain,
  industry: a.industry,
  created_at: toIso(a.created_at),
  updated_at: toIso(a.updated_at),
});

export const toContactRead = (c: ContactRow): ContactRead => ({
  id: c.id,
  tenant_id: c.tenant_id,
  first_name: c.first_name,
  last_name: c.last_name,
  name: contactName(c.first_name, c.last_name),
  email: c.email,
  phone: c.phone,
  account_id: c.account_id,
  created_at: toIso(c.created_at),
  updated_at: toIso(c.updated_at),
});
