import { createContext } from "preact";
import { useContext, useEffect } from "preact/hooks";
import { ErrorBox } from "../shared/states";
import { signedOut } from "./call";

/** What the console does when a call answers 401: back to its sign-in. */
export const SessionOver = createContext<() => void>(() => {});

/** A screen's failure: a 401 ends the session (the frame shows sign-in), anything else is said with a retry. */
export function Failure({ error, retry }: { error: unknown; retry?: () => void }) {
  const over = useContext(SessionOver);
  const out = signedOut(error);
  useEffect(() => {
    if (out) over();
  }, [out]);
  if (out) return <p role="status">Your session has ended. Sign in again.</p>;
  return <ErrorBox error={error} retry={retry} />;
}
