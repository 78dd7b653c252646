import type { Config } from "../config";

/** `suite tenant create --name Acme --subdomain=acme` → words ["tenant","create"], flags {name, subdomain}. */
export interface ParsedArgs {
  words: string[];
  flags: Record<string, string>;
}

/** A mistake on the command line: main prints one line and exits 64. */
export class UsageError extends Error {}

/** Options that take no value (present or not): `--adopt-keys`, `--yes`. Given, their value is "true". */
export const SWITCHES = new Set(["adopt-keys", "yes"]);

export function parseArgs(argv: string[]): ParsedArgs {
  const words: string[] = [];
  const flags: Record<string, string> = {};
  let asked: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    // Anywhere on the line, as every tool does: `suite tenant create --help` is help on that command.
    if (arg === "--help" || arg === "-h" || arg === "--version" || arg === "-V") {
      asked ??= arg === "--help" || arg === "-h" ? "help" : "version";
      continue;
    }
    if (!arg.startsWith("--")) {
      // Short options are not ours: `-p 8000` is a mistake, not the words "-p" and "8000".
      if (/^-[^-\d]/.test(arg)) throw new UsageError(`unknown option ${arg}; options are long, e.g. --port 8000 (see suite help)`);
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new UsageError(`unknown option ${arg}`);
    if (eq !== -1) flags[name] = arg.slice(eq + 1);
    else if (SWITCHES.has(name)) flags[name] = "true";
    else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`option --${name} needs a value (--${name} VALUE or --${name}=VALUE)`);
      flags[name] = value;
      i++;
    }
  }
  if (asked === "help") words.unshift("help");
  else if (asked === "version") words.splice(0, words.length, "version");
  return { words, flags };
}

/** Splits off a command's own options; what is left must be server settings. */
export function takeFlags(flags: Record<string, string>, names: string[]): Record<string, string> {
  const own: Record<string, string> = {};
  for (const n of names) {
    if (flags[n] !== undefined) {
      own[n] = flags[n]!;
      delete flags[n];
    }
  }
  return own;
}

export type Out = (line: string) => void;

/** What a command's handler gets: the settings, its own options, and the words after its name. */
export interface Invocation {
  config: Config;
  flags: Record<string, string>;
  args: string[];
}

/**
 * One entry of main's command table; `suite help` is generated from the table, and the checks
 * below run before any handler, so each handler sees complete input.
 */
export interface Command {
  /** One or two words: "serve", "tenant create". */
  name: string;
  /** What follows the name, as help shows it: "--name N [--modules crm,users]", "FILE". */
  usage?: string;
  /** One line of meaning. */
  help: string;
  /** Its own options (beside the settings, which every command accepts). */
  flags?: string[];
  /** Options it cannot do without, each optionally satisfied by a variable instead. */
  needs?: Array<string | { flag: string; env: string }>;
  /** Its positional arguments, all required ("FILE"). */
  args?: string[];
  /** Takes any words after its name (help's topic). */
  anyArgs?: boolean;
  /** `SUITE_*` variables it reads beside the settings, with one line of meaning each. */
  env?: Record<string, string>;
  /** false: runs without the settings (help, version), so a bad setting cannot stop it. */
  config?: boolean;
  run(c: Invocation): Promise<void> | void;
}

/** The command `words` name (longest match first), and the words after its name. */
export function findCommand(commands: Command[], words: string[]): { command: Command; rest: string[] } {
  for (const length of [2, 1]) {
    const name = words.slice(0, length).join(" ");
    const command = commands.find((c) => c.name === name);
    if (command && words.length >= length) return { command, rest: words.slice(length) };
  }
  const group = commands.filter((c) => c.name.startsWith(`${words[0]} `));
  if (group.length > 0) {
    const sub = words[1] === undefined ? `${words[0]}: missing the command` : `unknown command ${words.slice(0, 2).join(" ")}`;
    throw new UsageError(`${sub}; usage: ${group.map((c) => `suite ${c.name}${c.usage ? ` ${c.usage}` : ""}`).join(" | ")}`);
  }
  throw new UsageError(`unknown command ${words[0]}; see suite help`);
}

/** Everything `run` may rely on: no stray option or word, nothing it needs missing. */
export function checkInvocation(command: Command, rest: string[], flags: Record<string, string>, settingFlags: Set<string>, env: Record<string, string | undefined>): Record<string, string> {
  const own = takeFlags(flags, command.flags ?? []);
  for (const name of Object.keys(flags)) {
    if (!settingFlags.has(name)) throw new UsageError(`${command.name}: unknown option --${name}; see suite help ${command.name}`);
  }
  const expected = command.args ?? [];
  if (!command.anyArgs && rest.length > expected.length) throw new UsageError(`${command.name}: unexpected argument ${rest[expected.length]}; see suite help ${command.name}`);
  const missing = expected.slice(rest.length);
  for (const need of command.needs ?? []) {
    const { flag, env: variable } = typeof need === "string" ? { flag: need, env: undefined } : need;
    if (own[flag] === undefined && !(variable && env[variable])) missing.push(variable ? `--${flag} (or ${variable})` : `--${flag}`);
  }
  if (missing.length > 0) throw new UsageError(`${command.name}: missing ${listed(missing)}; usage: suite ${command.name} ${command.usage ?? ""}`.trimEnd());
  return own;
}

const listed = (items: string[]): string => (items.length === 1 ? items[0]! : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

/** `suite help`, or help on the commands whose name starts with `topic` ("tenant", "tenant create"). */
export function helpText(commands: Command[], topic: string[], settings: string): string {
  const chosen = topic.length === 0 ? commands : commands.filter((c) => `${c.name} `.startsWith(`${topic.join(" ")} `));
  if (chosen.length === 0) throw new UsageError(`unknown command ${topic.join(" ")}; see suite help`);
  const lines: string[] = [];
  if (topic.length === 0) lines.push("Workspace Suite: sign-in, organizations and a CRM, in one executable.", "", "usage: suite [command] [options]", "", "commands:");
  for (const c of chosen) {
    lines.push(`  suite ${c.name}${c.usage ? ` ${c.usage}` : ""}`, `      ${c.help}`);
    for (const [name, meaning] of Object.entries(c.env ?? {})) lines.push(`      ${name}: ${meaning}`);
  }
  if (topic.length > 0) lines.push("", "every command also takes the settings: see suite help");
  else {
    lines.push("", "settings, for every command (a flag, or its environment variable; the flag wins):", settings);
    lines.push("", "suite help COMMAND shows that command alone. Exit codes: 64 usage, 78 setting or database refused, 69 port in use.");
  }
  return lines.join("\n");
}
