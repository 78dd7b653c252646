/**
 * A note's text with its web addresses as links. Only http and https addresses become links (a
 * `javascript:` or `data:` one stays text); the text is never read as HTML (Preact escapes it),
 * and links open in a new tab with rel="noopener noreferrer".
 */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"']+/gi;
// Closing punctuation at the end of an address is usually the sentence's, not the address's.
const TRAILING = /[.,;:!?)\]]+$/;

export type Piece = { text: string } | { href: string; text: string };

/** The text split into plain pieces and links (exported for the component tests). */
export function pieces(text: string): Piece[] {
  const out: Piece[] = [];
  let at = 0;
  for (const m of text.matchAll(URL_IN_TEXT)) {
    const raw = m[0];
    const url = raw.replace(TRAILING, "");
    const start = m.index ?? 0;
    if (start > at) out.push({ text: text.slice(at, start) });
    let href: string | null = null;
    try {
      const u = new URL(url);
      if (u.protocol === "http:" || u.protocol === "https:") href = u.href;
    } catch {
      href = null;
    }
    out.push(href ? { href, text: url } : { text: url });
    at = start + url.length;
  }
  if (at < text.length) out.push({ text: text.slice(at) });
  return out;
}

export function LinkedText({ text }: { text: string }) {
  return (
    <>
      {pieces(text).map((p, i) =>
        "href" in p ? (
          <a key={i} href={p.href} target="_blank" rel="noopener noreferrer">
            {p.text}
          </a>
        ) : (
          p.text
        ),
      )}
    </>
  );
}
