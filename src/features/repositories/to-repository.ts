import type { repositories } from "../../platform/db/schema/repositories.ts";
import type { Repository } from "./schemas.ts";

export type RepositoryRow = typeof repositories.$inferSelect;

export const toRepository = (row: RepositoryRow): Repository => ({
  id: row.id,
  environmentId: row.environmentId,
  provider: row.provider,
  ...(row.path !== null ? { path: row.path } : {}),
  ...(row.installationId !== null ? { installationId: row.installationId } : {}),
  ...(row.fullName !== null ? { fullName: row.fullName } : {}),
  defaultBranch: row.defaultBranch,
  testCommand: row.testCommand,
  services: row.services,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
});
