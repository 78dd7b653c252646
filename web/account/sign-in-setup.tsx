/**
 * Where a member the organization's sign-in policy holds back lands after signing in: until they
 * add a passkey (or, when the policy allows it, turn on two-step verification), the server
 * answers nothing else (403 policy_setup_required), so this screen is all they can open. Both
 * panels re-read the session when they add a factor, and the screen then lets them continue.
 */
import { useState } from "preact/hooks";
import { PublicFrame } from "../shared/layout";
import { navigate } from "../shared/router";
import { useSession } from "../shared/session";
import { Passkeys } from "./passkeys";
import { TwoFactor } from "./two-factor";

export const SIGN_IN_SETUP = "/sign-in-setup";

export default function SignInSetupScreen() {
  const { me, signOut } = useSession();
  const need = me?.policy_setup ?? null;
  // What was asked when the screen opened: 2FA's panel stays after it is on, to show the backup codes.
  const [asked] = useState(need);
  return (
    <PublicFrame title="Secure your sign-in">
      {need ? (
        <p role="status" class="notice">
          {need === "passkey"
            ? "Your organization requires administrators to sign in with a passkey. Add one on this device to continue."
            : "Your organization requires a passkey or two-step verification. Set one up to continue."}
        </p>
      ) : (
        <div role="status" class="notice">
          <p>Your sign-in now meets your organization's rules.</p>
          <button type="button" class="primary" onClick={() => navigate("/")}>Continue</button>
        </div>
      )}
      <Passkeys />
      {asked === "passkey_or_2fa" && <TwoFactor />}
      <p>
        <button type="button" class="link" onClick={() => void signOut()}>Sign out</button>
      </p>
    </PublicFrame>
  );
}
