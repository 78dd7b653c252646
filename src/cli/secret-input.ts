import { UsageError } from "./args";

/** Where `suite user reset-password` and `suite tenant create` take a new password from; never a flag (it would show in `ps`). */
export const NEW_PASSWORD_VARIABLE = "SUITE_NEW_PASSWORD";

/** The sentence that refuses a password given as an option (`--password`, `--admin-password`). */
export const passwordOptionRefused = (flag: string): string =>
  `a password is never given as an option (--${flag} would show in ps): type it at the prompt, or give it in ${NEW_PASSWORD_VARIABLE} or on stdin`;

/**
 * The new password: the first of `variables` that is set (SUITE_NEW_PASSWORD, then any older
 * name a command still accepts); else, at a terminal, typed twice at a prompt that does not echo;
 * else the first line of stdin (a pipe or a file: `suite user reset-password … < pw`).
 */
export async function readNewPassword(variables: readonly string[] = [NEW_PASSWORD_VARIABLE]): Promise<string> {
  for (const name of variables) {
    const fromEnv = process.env[name];
    if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  }
  if (process.stdin.isTTY) {
    const first = await promptHidden("New password: ");
    const again = await promptHidden("Repeat it: ");
    if (first !== again) throw new UsageError("the two passwords differ; nothing was changed");
    return first;
  }
  const text = await Bun.stdin.text();
  const line = text.split("\n")[0]!.replace(/\r$/, "");
  if (line === "") throw new UsageError(`no new password: type it at the prompt (a terminal), or give it in ${NEW_PASSWORD_VARIABLE} or on stdin`);
  return line;
}

/** Reads one line from the terminal without echoing it; Ctrl-C or Ctrl-D abandons the command. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    let typed = "";
    const done = (err: Error | null) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done(null);
        if (ch === "\u0003" || ch === "\u0004") return done(new UsageError("cancelled; nothing was changed"));
        if (ch === "\u007f" || ch === "\b") typed = [...typed].slice(0, -1).join("");
        else if (ch >= " ") typed += ch;
      }
    };
    // No echo from before the question shows: what is typed after it is never displayed.
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
    process.stderr.write(question);
  });
}
