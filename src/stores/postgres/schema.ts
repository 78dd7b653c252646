import type { Pg } from "./database";

/**
 * The PostgreSQL schema, one file per feature group, applied in this order (later files refer to
 * earlier tables). Imported as text so that the compiled binary carries them.
 */
const FILES: Array<{ name: string; sql: string }> = [
  // Each group adds its line: { name: "10-tenants-users.sql", sql: (await import("./schema/10-tenants-users.sql", { with: { type: "text" } })).default },
];

/** Creates every table and index in an empty database (or schema), in one transaction. */
export async function applySchema(pg: Pg): Promise<void> {
  await pg.begin(async (tx) => {
    for (const f of FILES) await tx.unsafe(f.sql);
  });
}

export const schemaFiles = (): ReadonlyArray<{ name: string; sql: string }> => FILES;
