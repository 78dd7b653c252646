import type { DemoSeedStore } from "../../crm/seed-store";
import type { Db } from "../../db/database";
import { bulkSeed, claimFile } from "./bulk-load";
import { liveSeed, removeSeededTenant } from "./live-seed";

/** `suite seed` on SQLite: the bulk path when the file is the seed's alone, else the live one. */
export function createSqliteSeedStore(db: Db): DemoSeedStore {
  return {
    async seed(t, now, hooks) {
      // The fast path rebuilds indexes and switches the journal: only with the file to itself.
      if (claimFile(db)) return bulkSeed(db, [t], now)[0]!;
      hooks.alongside();
      const { longest, ...result } = await liveSeed(db, t, now, hooks.progress);
      hooks.held?.(longest.ms, longest.what);
      return result;
    },
    removeTenant: (tenantId) => removeSeededTenant(db, tenantId),
  };
}
