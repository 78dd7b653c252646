/** Deals: placeholder until the CRM screens land (this folder's index is what web/routes.tsx shows). */
import { Coming } from "../shared/layout";

export default function DealsScreen() {
  return <Coming title="Deals" />;
}
