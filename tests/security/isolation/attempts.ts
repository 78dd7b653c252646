import { AUDIT_STAGE_ATTEMPTS } from "./attempts-audit-stages";
import { AUTH_ATTEMPTS } from "./attempts-auth";
import { PASSKEY_ATTEMPTS } from "./attempts-passkeys";
import { OIDC_ATTEMPTS } from "./attempts-oidc";
import { CRM_ATTEMPTS } from "./attempts-crm";
import { VIEW_ATTEMPTS } from "./attempts-views";
import { WEBHOOK_ATTEMPTS } from "./attempts-webhooks";
import { TEAM_ATTEMPTS } from "./attempts-team";
import { EVENT_ATTEMPTS } from "./attempts-events";
import { OPERATOR_ATTEMPTS } from "./attempts-operator";
import type { Attempt } from "./attempt-kit";

export type { Attempt, Sent } from "./attempt-kit";

/**
 * The table of cross-tenant attempts: tenant B (its admin, or its member where the role
 * matters) reaching for tenant A's ids, subdomain and credentials, one row per attempt, keyed by
 * the OpenAPI operation it exercises. The test checks that every operation that takes an id,
 * lists rows or writes rows has rows here; the runner checks each answer's status and code, that
 * no answer shows anything of A the request did not itself send, and that lists hold no A rows.
 * The order matters: the CRM's last attempt gives B a stage whose key carries A's word.
 */
export const ATTEMPTS: Attempt[] = [...AUTH_ATTEMPTS, ...PASSKEY_ATTEMPTS, ...OIDC_ATTEMPTS, ...TEAM_ATTEMPTS, ...AUDIT_STAGE_ATTEMPTS, ...EVENT_ATTEMPTS, ...CRM_ATTEMPTS, ...VIEW_ATTEMPTS, ...WEBHOOK_ATTEMPTS, ...OPERATOR_ATTEMPTS];
