// The Idempotency-Key of each create the web app sends (see request() in client.ts).

/**
 * One Idempotency-Key per form submission: a create gets the key of the submission under way for
 * its path, or a new one. The same body sent again (a double click, "Create" pressed again after a
 * timeout or a lost answer) is the same submission and keeps its key, so the server answers it with
 * the first answer instead of making a second record; another body, or any create after a success,
 * gets a new key. Random from getRandomValues, which (unlike randomUUID) plain-http pages have too.
 */
const submissions = new Map<string, { key: string; body: string }>();

export function submissionKey(path: string, body: unknown): string {
  const text = JSON.stringify(body ?? {});
  const open = submissions.get(path);
  if (open && open.body === text) return open.key;
  const key = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  submissions.set(path, { key, body: text });
  return key;
}

/** The submission answered (or its key refused): the next create on `path` is a new submission. */
export function submissionDone(path: string, key: string): void {
  if (submissions.get(path)?.key === key) submissions.delete(path);
}
