/** Contacts: placeholder until the CRM screens land (this folder's index is what web/routes.tsx shows). */
import { Coming } from "../shared/layout";

export default function ContactsScreen() {
  return <Coming title="Contacts" />;
}
