/**
 * A reader that goes away (`suite backup FILE | head -1`, a log pipe that closed) ends the command
 * quietly, as a closed pipe ends any Unix tool: no stack trace, no message (there is nobody to
 * read one). Bun reports the closed pipe as EPIPE, thrown by the write itself or emitted on the
 * stream. A command ends at once (exit 0: what it printed so far was read); `suite serve` stops
 * as on SIGTERM instead (whenPipeBreaks), so requests in flight finish and the database closes.
 */
let onBroken: () => void = () => process.exit(0);
let broken = false;

const isBrokenPipe = (e: unknown): boolean => (e as NodeJS.ErrnoException | null)?.code === "EPIPE";

/** What a closed stdout or stderr does instead of ending the process at once. */
export function whenPipeBreaks(f: () => void): void {
  onBroken = f;
}

function pipeBroke(): void {
  if (broken) return;
  broken = true;
  onBroken();
}

/** Writes to stdout or stderr; once a reader has gone, nothing more is written. */
export function writeTo(stream: NodeJS.WriteStream, text: string): void {
  if (broken) return;
  try {
    stream.write(text);
  } catch (e) {
    if (!isBrokenPipe(e)) throw e;
    pipeBroke();
  }
}

/** Catches an EPIPE emitted on stdout or stderr (a write that failed after it returned). */
export function endQuietlyOnBrokenPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: unknown) => {
      if (!isBrokenPipe(e)) throw e;
      pipeBroke();
    });
  }
}
