/**
 * The operator console (/operator on the base domain): a chunk of its own, loaded only when an
 * operator opens it, so an organization's first load does not grow.
 */
import { useEffect, useState } from "preact/hooks";
import { Link, navigate, useLocation } from "../shared/router";
import { Loading } from "../shared/states";
import { Toasts } from "../shared/toast";
import { TopBar } from "../shared/top-bar";
import { NO_RETRY, api, signedOut } from "./call";
import { Account } from "./account";
import { Audit } from "./audit";
import { Backups } from "./backups";
import { Failure, SessionOver } from "./failure";
import { Jobs } from "./jobs";
import { Mail } from "./mail";
import { Organizations } from "./organizations";
import { Overview } from "./overview";
import { Server } from "./server";
import { OperatorSignIn } from "./sign-in";
import { adoptConsoleStyles } from "./styles";

adoptConsoleStyles();

const SCREENS = [
  { path: "/operator", label: "Overview", screen: Overview },
  { path: "/operator/organizations", label: "Organizations", screen: Organizations },
  { path: "/operator/mail", label: "Mail queue", screen: Mail },
  { path: "/operator/jobs", label: "Jobs", screen: Jobs },
  { path: "/operator/backups", label: "Backups", screen: Backups },
  { path: "/operator/server", label: "Server", screen: Server },
  { path: "/operator/audit", label: "Audit", screen: Audit },
  { path: "/operator/account", label: "Your account", screen: Account },
];

export default function OperatorConsole() {
  const { path } = useLocation();
  const [email, setEmail] = useState<string | null | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(null);

  const check = () =>
    api
      .get("/api/v1/operator/auth/me", NO_RETRY)
      .then((me) => setEmail(me.email))
      .catch((e) => (signedOut(e) ? setEmail(null) : setFailure(e)));
  useEffect(() => void check(), []);

  const screen = SCREENS.find((s) => s.path === path) ?? SCREENS[0]!;
  useEffect(() => {
    document.title = `${email ? screen.label : "Sign in"} · Operator console`;
  }, [screen, email]);

  if (failure) return <div class="public"><main class="card"><Failure error={failure} retry={() => { setFailure(null); void check(); }} /></main></div>;
  if (email === undefined) return <Loading />;
  if (email === null) return <OperatorSignIn onSignedIn={() => void check()} />;

  const signOut = async () => {
    await api.post("/api/v1/operator/auth/logout", NO_RETRY).catch(() => {});
    setEmail(null);
    navigate("/operator");
  };
  const Screen = screen.screen;
  return (
    <SessionOver.Provider value={() => setEmail(null)}>
      <div class="layout op-layout">
        <a class="skip" href="#main">Skip to content</a>
        <TopBar brand="Operator console" navLabel="Console" email={email} onSignOut={() => void signOut()}>
          {SCREENS.map((s) => (
            <li key={s.path}><Link href={s.path} aria-current={s === screen ? "page" : undefined}>{s.label}</Link></li>
          ))}
        </TopBar>
        <main id="main" tabIndex={-1}>
          <Screen />
        </main>
        <Toasts />
      </div>
    </SessionOver.Provider>
  );
}
