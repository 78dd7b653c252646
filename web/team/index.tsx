import { Coming } from "../shared/layout";

export default function Screen() {
  return <Coming title="Team" />;
}
