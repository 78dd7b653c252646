import { writeTo } from "./broken-pipe";

/** One JSON object per line. Never given a password, token, code, cookie or mailed link. */
export type Logger = (line: Record<string, unknown>) => void;

export const stdoutLogger: Logger = (line) => writeTo(process.stdout, `${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);
