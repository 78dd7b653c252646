/** Whether this browser asked for the sign-in link it opens (issue 29.5: login CSRF by a sent link). */

/** localStorage of this origin: when this browser last asked for a sign-in link here. */
const ASKED = "suite-magic-link-asked";
const ASKED_FRESH_MS = 60 * 60_000;

/** The sign-in page calls this when it asks for a link: a link opened later in this browser goes straight in. */
export function rememberLinkAsked(): void {
  try {
    localStorage.setItem(ASKED, String(Date.now()));
  } catch {
    /* storage off: the link will ask to confirm */
  }
}

export function askedHere(): boolean {
  try {
    const at = Number(localStorage.getItem(ASKED));
    return at > 0 && Date.now() - at < ASKED_FRESH_MS;
  } catch {
    return false;
  }
}
