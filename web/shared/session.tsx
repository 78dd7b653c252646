/** The signed-in user and organization, loaded once from /auth/me and shared by every screen. */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { api, refreshSession, scheduleRefresh, type Me } from "../api/client";

export interface SessionState {
  me: Me | null;
  /** Reload /auth/me (after sign-in, a rename). */
  reload: () => Promise<Me | null>;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionState>({
  me: null,
  reload: async () => null,
  signOut: async () => {},
});

export const useSession = () => useContext(SessionContext);

/** The user of the page, or null when signed out; a refresh is tried once before giving up. */
export async function loadMe(): Promise<Me | null> {
  try {
    const me = await api.get("/api/v1/auth/me", { noAuthRetry: true });
    scheduleRefresh();
    return me;
  } catch {
    if (!(await refreshSession())) return null;
    try {
      return await api.get("/api/v1/auth/me", { noAuthRetry: true });
    } catch {
      return null;
    }
  }
}
