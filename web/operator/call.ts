/**
 * The console's calls: the typed client, with no refresh and no redirect on a 401 (an operator's
 * session has no refresh token; a 401 means sign in again, which the console shows itself).
 */
import { ApiError, api } from "../api/client";

export const NO_RETRY = { noAuthRetry: true } as const;

/** Whether a failure means the operator's session is over (expired, idle, signed out elsewhere). */
export const signedOut = (e: unknown): boolean => e instanceof ApiError && e.status === 401;

/** Whether a failure asks for the password again (step-up). */
export const needsStepUp = (e: unknown): boolean => e instanceof ApiError && e.code === "reauthentication_required";

export { api };
