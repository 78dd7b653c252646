/** What a screen of a module that is turned off shows instead of itself. */
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { MODULES } from ".";

export function ModuleOff({ module }: { module: string }) {
  const { me } = useSession();
  const label = MODULES.find((m) => m.key === module)?.label ?? module;
  return (
    <section class="module-off" role="status">
      <h1>The {label} module is off</h1>
      <p>This workspace has the {label} module turned off, so its screens are hidden. Nothing was deleted: when it is turned on again, everything is back.</p>
      {me?.user.role === "admin" ? (
        <p>
          You can turn it on in <Link href="/organization">Organization settings</Link>.
        </p>
      ) : (
        <p>Ask an admin of your workspace to turn it on.</p>
      )}
    </section>
  );
}
