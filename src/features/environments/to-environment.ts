import type { environments } from "../../platform/db/schema/environments.ts";
import type { Environment } from "./schemas.ts";

export const toEnvironment = (row: typeof environments.$inferSelect): Environment => ({
  id: row.id,
  organizationId: row.organizationId,
  name: row.name,
  revision: row.revision,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});
