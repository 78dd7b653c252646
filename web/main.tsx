import { render } from "preact";
import { App } from "./app";

// A second mailed link opened in the same tab changes only the fragment: read it afresh.
window.addEventListener("hashchange", () => {
  if (/(^|[#&])token=/.test(location.hash)) location.reload();
});

render(<App />, document.getElementById("app")!);
