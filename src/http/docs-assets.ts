/**
 * Swagger UI's script and stylesheet: 1.9 MB as swagger-ui-dist ships them, half of what our code
 * added to the executable. `bun run build` embeds them gzipped instead (0.5 MB; dist/web/embed.ts
 * registers them before the server starts); running from source, they are read from node_modules.
 */
export type DocsAssetName = "swagger-ui-bundle.js" | "swagger-ui.css";

let embedded: Record<DocsAssetName, string> | undefined;

/** Paths Bun gives `import … with { type: "file" }` for the gzipped files. */
export function registerDocsAssets(gzipped: Record<DocsAssetName, string>): void {
  embedded = gzipped;
}

/** Where the asset's bytes are, and whether they are gzipped. */
export function docsAssetFile(name: DocsAssetName): { path: string; gzipped: boolean } {
  if (embedded) return { path: embedded[name], gzipped: true };
  // Resolved when asked, not imported: an import would embed the uncompressed file as well.
  return { path: Bun.resolveSync(`swagger-ui-dist/${name}`, import.meta.dir), gzipped: false };
}
