import { existsSync, readFileSync } from "node:fs";
import { ConfigError } from "../config";

/**
 * The settings file the systemd unit reads (deploy/suite.service: EnvironmentFile=), read by every
 * `suite` command too, so that a command run beside the server (`sudo -u suite suite tenant create
 * …`) seals and addresses its mail with the server's settings (SUITE_PUBLIC_URL for the links,
 * SUITE_ENCRYPTION_KEY for the sealed outbox, SUITE_MAIL_FROM…), not with the defaults.
 */
export const DEFAULT_ENV_FILE = "/etc/suite/suite.env";

/**
 * KEY=VALUE lines as systemd's EnvironmentFile= reads them: blank lines and lines starting with
 * `#` or `;` are skipped; whitespace around the key and the value goes; a value in double quotes
 * takes `\"`, `\\`, `\n` escapes, one in single quotes is literal; a line ending in `\` continues
 * on the next. A line that is not KEY=VALUE is an error naming its line (systemd ignores it with
 * a warning; a command about to act on the wrong settings had better stop).
 */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const number = i + 1;
    let line = lines[i]!;
    while (line.endsWith("\\") && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!;
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#") || trimmed.startsWith(";")) continue;
    const eq = trimmed.indexOf("=");
    const key = eq === -1 ? "" : trimmed.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new ConfigError(`${file} line ${number}: expected KEY=VALUE`);
    let value = trimmed.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    } else if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) {
      value = value.slice(1, -1);
    }
    out[key] = value;
  }
  return out;
}

/**
 * Reads the settings file into `env` where `env` has no value yet (unset or empty): a variable set in the
 * command's own environment wins over the file (`SUITE_PUBLIC_URL=… suite …` is meant), and a
 * flag wins over both (loadConfig). `--env-file PATH` must exist and be readable; the default
 * file is read when it exists and is readable, and named in a warning when it exists but this
 * user cannot read it. Answers the file read (null: none) and the warnings to print.
 */
export function applyEnvFile(
  given: string | undefined,
  env: Record<string, string | undefined>,
  defaultFile: string = DEFAULT_ENV_FILE,
): { file: string | null; warnings: string[] } {
  if (given !== undefined) {
    if (given === "") throw new ConfigError("--env-file needs a file (--env-file /etc/suite/suite.env)");
    let text: string;
    try {
      text = readFileSync(given, "utf8");
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new ConfigError(`cannot read --env-file ${given}: ${code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : (e as Error).message}`);
    }
    merge(parseEnvFile(text, given), env);
    return { file: given, warnings: [] };
  }
  if (!existsSync(defaultFile)) return { file: null, warnings: [] };
  let text: string;
  try {
    text = readFileSync(defaultFile, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "EACCES" ? "this user cannot read it" : code === "EISDIR" ? "it is a folder" : (e as Error).message;
    return {
      file: null,
      warnings: [
        `${defaultFile} exists but ${why}: this command runs with its own settings, not the server's; ` +
          "make the file readable by the server's group (chgrp suite, chmod 0640) or give --env-file",
      ],
    };
  }
  merge(parseEnvFile(text, defaultFile), env);
  return { file: defaultFile, warnings: [] };
}

function merge(from: Record<string, string>, env: Record<string, string | undefined>): void {
  // An empty variable counts as unset, as it does for every setting (loadConfig).
  for (const [k, v] of Object.entries(from)) if (env[k] === undefined || env[k] === "") env[k] = v;
}
