/**
 * Every screen of the app, by path: ONE table. `auth: true` screens show inside the signed-in
 * layout (a signed-out visitor is sent to sign-in); `admin` ones only to admins.
 */
import type { ComponentType } from "preact";
import AccountScreen from "./account";
import AccountsScreen from "./accounts";
import ContactsScreen from "./contacts";
import DealsScreen from "./deals";
import ImportScreen from "./import";
import AcceptInvitation from "./join/accept-invitation";
import MagicLink from "./sign-in/magic-link";
import SignIn from "./sign-in";
import PublicHome from "./signup";
import PipelineScreen from "./stages";
import TeamScreen from "./team";

export interface Route {
  path: string;
  screen: ComponentType;
  /** Shown only signed in, inside the layout. */
  auth?: boolean;
  admin?: boolean;
  title: string;
}

/** Routes on an organization's host (acme.<base>). A path matches itself and what lies below it. */
export const WORKSPACE_ROUTES: Route[] = [
  { path: "/sign-in", screen: SignIn, title: "Sign in" },
  { path: "/magic-link", screen: MagicLink, title: "Signing in" },
  { path: "/accept-invitation", screen: AcceptInvitation, title: "Join your team" },
  { path: "/deals", screen: DealsScreen, auth: true, title: "Deals" },
  { path: "/accounts", screen: AccountsScreen, auth: true, title: "Accounts" },
  { path: "/contacts", screen: ContactsScreen, auth: true, title: "Contacts" },
  { path: "/pipeline", screen: PipelineScreen, auth: true, title: "Pipeline" },
  { path: "/import", screen: ImportScreen, auth: true, title: "Import" },
  { path: "/team", screen: TeamScreen, auth: true, admin: true, title: "Team" },
  { path: "/settings", screen: AccountScreen, auth: true, title: "My account" },
];

/** Where a signed-in visitor of "/" (or an unknown path) goes. */
export const HOME = "/deals";

/** Routes on the base domain: the public page (signup, find your workspace) and sign-in. */
export const PUBLIC_ROUTES: Route[] = [
  { path: "/sign-in", screen: SignIn, title: "Sign in" },
  { path: "/", screen: PublicHome, title: "Workspace Suite" },
];

export function match(routes: Route[], path: string): Route | undefined {
  return routes.find((r) => path === r.path || (r.path !== "/" && path.startsWith(`${r.path}/`)));
}
