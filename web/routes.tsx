/**
 * Every screen of the app, by path: ONE table. `auth: true` screens show inside the signed-in
 * layout (a signed-out visitor is sent to sign-in); `admin` ones only to admins.
 */
import type { ComponentType } from "preact";
import AccountScreen from "./account";
import SignInSetupScreen, { SIGN_IN_SETUP } from "./account/sign-in-setup";
import AccountsScreen from "./accounts";
import ContactsScreen from "./contacts";
import DealsScreen from "./deals";
import ImportScreen from "./import";
import AcceptInvitation from "./join/accept-invitation";
import MagicLink from "./sign-in/magic-link";
import ForgotPassword from "./password/forgot";
import ResetPassword from "./password/reset";
import VerifyEmail from "./verify-email";
import NotMe from "./not-me";
import SignIn from "./sign-in";
import SecurityLogScreen from "./security-log";
import SignInProvidersScreen from "./sign-in-providers";
import PublicHome from "./signup";
import OrganizationScreen from "./organization";
import PipelineScreen from "./stages";
import TeamScreen from "./team";
import { lazyScreen } from "./shared/lazy";

// Admins only, and seldom opened: its own chunk, off the first load.
const WebhooksScreen = lazyScreen(() => import("./webhooks").then((m) => m.default));

export interface Route {
  path: string;
  screen: ComponentType;
  /** Shown only signed in, inside the layout. */
  auth?: boolean;
  admin?: boolean;
  /** The module the screen belongs to: while it is off, the screen says so instead (web/organization/module-off.tsx). */
  module?: "crm" | "users";
  title: string;
}

/** Routes on an organization's host (acme.<base>). A path matches itself and what lies below it. */
export const WORKSPACE_ROUTES: Route[] = [
  { path: "/sign-in", screen: SignIn, title: "Sign in" },
  { path: "/magic-link", screen: MagicLink, title: "Signing in" },
  { path: "/accept-invitation", screen: AcceptInvitation, title: "Join your team" },
  { path: "/forgot-password", screen: ForgotPassword, title: "Forgot your password" },
  { path: "/reset-password", screen: ResetPassword, title: "Choose a new password" },
  { path: "/verify-email", screen: VerifyEmail, title: "Confirm your email address" },
  { path: "/not-me", screen: NotMe, title: "Was this not you?" },
  { path: "/deals", module: "crm", screen: DealsScreen, auth: true, title: "Deals" },
  { path: "/accounts", module: "crm", screen: AccountsScreen, auth: true, title: "Accounts" },
  { path: "/contacts", module: "crm", screen: ContactsScreen, auth: true, title: "Contacts" },
  { path: "/pipeline", module: "crm", screen: PipelineScreen, auth: true, title: "Pipeline" },
  { path: "/team", module: "users", screen: TeamScreen, auth: true, admin: true, title: "Team" },
  // Before /organization, which would match this path too.
  { path: "/organization/webhooks", screen: WebhooksScreen, auth: true, admin: true, title: "Webhooks" },
  { path: "/organization", screen: OrganizationScreen, auth: true, admin: true, title: "Organization" },
  { path: "/sign-in-providers", screen: SignInProvidersScreen, auth: true, admin: true, title: "Sign-in providers" },
  { path: "/security-log", screen: SecurityLogScreen, auth: true, admin: true, title: "Security log" },
  { path: "/import", module: "crm", screen: ImportScreen, auth: true, title: "Import" },
  { path: "/settings", screen: AccountScreen, auth: true, title: "My account" },
  // Outside the layout (web/app.tsx): a member the sign-in policy holds back can open nothing else.
  { path: SIGN_IN_SETUP, screen: SignInSetupScreen, auth: true, title: "Secure your sign-in" },
];

/** Where a signed-in visitor of "/" (or an unknown path) goes. */
export const HOME = "/deals";

/** Routes on the base domain: the public page (signup, find your workspace) and sign-in. */
export const PUBLIC_ROUTES: Route[] = [
  { path: "/sign-in", screen: SignIn, title: "Sign in" },
  { path: "/forgot-password", screen: ForgotPassword, title: "Forgot your password" },
  { path: "/", screen: PublicHome, title: "Workspace Suite" },
];

export function match(routes: Route[], path: string): Route | undefined {
  return routes.find((r) => path === r.path || (r.path !== "/" && path.startsWith(`${r.path}/`)));
}
