/** `suite tenant create --name Acme --subdomain=acme` → words ["tenant","create"], flags {name, subdomain}. */
export interface ParsedArgs {
  words: string[];
  flags: Record<string, string>;
}

export class UsageError extends Error {}

export function parseArgs(argv: string[]): ParsedArgs {
  const words: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") {
      words.unshift("help");
      continue;
    }
    if (!arg.startsWith("--")) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new UsageError(`unknown option ${arg}`);
    if (eq !== -1) flags[name] = arg.slice(eq + 1);
    else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`option --${name} needs a value`);
      flags[name] = value;
      i++;
    }
  }
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
