/** The app: resolves the session once, then shows the screen the path names (web/routes.tsx). */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, setPolicySetupHandler, setSignedOutHandler, stopRefresh, type Me } from "./api/client";
import { HOME, PUBLIC_ROUTES, WORKSPACE_ROUTES, match } from "./routes";
import { currentSubdomain } from "./shared/config";
import { Layout, PublicFrame } from "./shared/layout";
import { navigate, useLocation } from "./shared/router";
import { SessionContext, loadMe } from "./shared/session";
import { ErrorBox, Loading } from "./shared/states";
import { continueHandoff, finishHandoff } from "./sign-in/handoff";
import { ModuleOff } from "./organization/module-off";
import { PasskeyOffer } from "./account/passkey-offer";
import { SIGN_IN_SETUP } from "./account/sign-in-setup";
import type { ComponentType } from "preact";

export function App() {
  const { path } = useLocation();
  const workspace = currentSubdomain();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(null);

  // The latest check wins: a background check started before a sign-in must not undo it.
  const seq = useRef(0);
  const reload = async () => {
    const mine = ++seq.current;
    const m = await loadMe();
    if (mine === seq.current) setMe(m);
    return m;
  };
  const signOut = async () => {
    stopRefresh();
    await api.post("/api/v1/auth/logout").catch(() => {});
    setMe(null);
    navigate("/sign-in");
  };

  useEffect(() => {
    setSignedOutHandler(() => {
      setMe(null);
      const here = location.pathname + location.search;
      navigate(`/sign-in${here === "/" ? "" : `?next=${encodeURIComponent(here)}`}`);
    });
    // The organization's sign-in policy started holding this user back (it was just turned on): re-read who they are.
    setPolicySetupHandler(() => void reload());
    if (!workspace) {
      // The base page's half of a handoff (sign-in/handoff.ts): it may navigate away at once.
      continueHandoff();
      return void setMe(null);
    }
    // Arriving from the base domain with a handoff: this host's cookies first, then the session.
    finishHandoff()
      .then((away) => (away ? undefined : reload()))
      .catch((e) => setFailure(e));
  }, []);

  useEffect(() => {
    const r = match(workspace ? WORKSPACE_ROUTES : PUBLIC_ROUTES, path);
    document.title = r ? `${r.title} · Workspace Suite` : "Workspace Suite";
  }, [path]);

  const session = { me: me ?? null, reload, signOut };
  if (failure) return <PublicFrame title="Something went wrong"><ErrorBox error={failure} retry={() => location.reload()} /></PublicFrame>;

  // The operator console: the base domain only, its own chunk (web/operator), loaded when opened.
  if (!workspace && (path === "/operator" || path.startsWith("/operator/"))) return <OperatorChunk />;

  if (!workspace) {
    const r = match(PUBLIC_ROUTES, path) ?? PUBLIC_ROUTES[PUBLIC_ROUTES.length - 1]!;
    return (
      <SessionContext.Provider value={session}>
        <r.screen />
      </SessionContext.Provider>
    );
  }

  const r = match(WORKSPACE_ROUTES, path);
  // Signed-out screens show at once; the session check finishes behind them.
  if (me === undefined && !(r && !r.auth)) return <PublicFrame title="Workspace Suite"><Loading /></PublicFrame>;
  if (!r || (r.auth && !me)) {
    const target = me ? HOME : "/sign-in" + (path === "/" || !r ? "" : `?next=${encodeURIComponent(path + location.search)}`);
    return <Redirect to={target} />;
  }
  if (me && r.path === "/sign-in") return <Redirect to={new URLSearchParams(location.search).get("next") ?? HOME} />;
  // Until they comply with the sign-in policy, the setup screen is the only one (the server answers nothing else).
  if (me?.policy_setup && r.auth && r.path !== SIGN_IN_SETUP) return <Redirect to={SIGN_IN_SETUP} />;
  const Screen = r.screen;
  return (
    <SessionContext.Provider value={session}>
      {r.path === SIGN_IN_SETUP ? (
        <Screen />
      ) : r.auth ? (
        <Layout>
          <PasskeyOffer />
          {r.admin && me?.user.role !== "admin" ? (
            <p role="alert">Only administrators can open this page.</p>
          ) : r.module && me && !me.tenant.modules.includes(r.module) ? (
            <ModuleOff module={r.module} />
          ) : (
            <Screen />
          )}
        </Layout>
      ) : (
        <Screen />
      )}
    </SessionContext.Provider>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

/** Loads the operator console's chunk once, on the first visit of /operator. */
let operatorConsole: Promise<ComponentType> | undefined;
function OperatorChunk() {
  const [Console, setConsole] = useState<ComponentType | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  useEffect(() => {
    operatorConsole ??= import("./operator").then((m) => m.default);
    operatorConsole.then((c) => setConsole(() => c)).catch((e) => {
      operatorConsole = undefined;
      setFailure(e);
    });
  }, []);
  if (failure) return <PublicFrame title="Operator console"><ErrorBox error={failure} retry={() => location.reload()} /></PublicFrame>;
  return Console ? <Console /> : <PublicFrame title="Operator console"><Loading /></PublicFrame>;
}
