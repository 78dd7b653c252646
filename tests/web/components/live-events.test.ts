import { expect, test } from "bun:test";
import { KNOWN_TYPES } from "../../../web/shared/live-events";
import { EVENT_TYPES } from "../../../src/events/repo";

test("the web app's EventSource listens to every event type a screen shows (an unnamed one would never arrive)", () => {
  const shown = EVENT_TYPES.filter((t) => !t.startsWith("user.") && !t.startsWith("session."));
  expect([...KNOWN_TYPES].sort()).toEqual([...shown].sort());
});
