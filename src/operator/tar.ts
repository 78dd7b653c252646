/**
 * A POSIX tar (ustar) stream of a few files already on disk: the final export of a deleted
 * organization, handed over as one download. Tar rather than zip: every system opens it, it needs
 * no compression code, and each file is streamed from disk a chunk at a time (no file is ever
 * held whole in memory, and no step holds the thread long).
 */
export interface TarEntry {
  name: string;
  path: string;
}

const BLOCK = 512;

/** One ustar header block: name, mode 0600, size and time in octal, checksum over the block. */
function header(name: string, size: number, mtimeSeconds: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (text: string, at: number, len: number) => h.set(new TextEncoder().encode(text).subarray(0, len), at);
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0");
  put(name, 0, 100);
  put(octal(0o600, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(mtimeSeconds, 12), 136, 12);
  put("        ", 148, 8); // the checksum counts its own field as spaces
  put("0", 156, 1);
  put("ustar\u000000", 257, 8);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${octal(sum, 7)}\u0000 `, 148, 8);
  return h;
}

/** The files as one tar stream; `finally` runs once the stream has ended or was cancelled. */
export function tarStream(entries: TarEntry[], mtimeMs: number, onEnd: () => Promise<void>): ReadableStream<Uint8Array> {
  async function* blocks(): AsyncGenerator<Uint8Array> {
    for (const e of entries) {
      const file = Bun.file(e.path);
      const size = file.size;
      yield header(e.name, size, Math.floor(mtimeMs / 1000));
      for await (const chunk of file.stream()) yield chunk;
      if (size % BLOCK) yield new Uint8Array(BLOCK - (size % BLOCK));
    }
    yield new Uint8Array(BLOCK * 2);
  }
  const it = blocks();
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    await onEnd();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done) {
        controller.close();
        await end();
      } else controller.enqueue(next.value);
    },
    async cancel() {
      await it.return(undefined);
      await end();
    },
  });
}
