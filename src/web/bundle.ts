import { type WebAsset, type WebBundle, buildWebBundle } from "./build";

/**
 * The web app's files: embedded in the binary by `bun run build` (dist/web/embed.ts registers
 * them before the server starts), or, running from source, built in memory on first use.
 */

export interface EmbeddedFile {
  path: string;
  type: string;
  /** Paths Bun gives `import … with { type: "file" }`: the files live inside the executable. */
  body: string;
  gzip: string;
  br: string;
}

let embedded: { html: string; files: EmbeddedFile[] } | undefined;
let loading: Promise<WebBundle> | undefined;

export function registerEmbedded(html: string, files: EmbeddedFile[]): void {
  embedded = { html, files };
}

const bytes = async (path: string) => new Uint8Array(await Bun.file(path).arrayBuffer());

async function loadEmbedded(e: NonNullable<typeof embedded>): Promise<WebBundle> {
  const assets = new Map<string, WebAsset>();
  for (const f of e.files) {
    assets.set(f.path, { path: f.path, type: f.type, body: await bytes(f.body), gzip: await bytes(f.gzip), br: await bytes(f.br) });
  }
  return { html: await Bun.file(e.html).text(), assets };
}

/** Loaded once per process; a failed build is tried again on the next request. */
export function webBundle(): Promise<WebBundle> {
  loading ??= (embedded ? loadEmbedded(embedded) : buildWebBundle()).catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}
