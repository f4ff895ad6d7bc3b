import { bigint, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { organizationRef } from "./organizations.ts";

export const repositoryProviders = ["local-git", "github"] as const;
export type RepositoryProvider = (typeof repositoryProviders)[number];

/**
 * A source repository a human registered for remediation in one environment. `services` maps
 * the problems of those services to this repository. Registered by people only (issue 9's human
 * boundary): an agent may name a registration or a GitHub `owner/name`, never a path, and only
 * a human's registration is ever used.
 */
export const repositories = pgTable(
  "repositories",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    provider: text("provider", { enum: repositoryProviders }).notNull(),
    /** local-git: the repository's absolute, canonical top-level directory. */
    path: text("path"),
    /** github: the App installation and `owner/name`. */
    installationId: bigint("installation_id", { mode: "number" }),
    fullName: text("full_name"),
    defaultBranch: text("default_branch").notNull(),
    testCommand: text("test_command").notNull(),
    services: jsonb("services").$type<string[]>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [
    index("repositories_env_page_idx").on(t.environmentId, t.createdAt, t.id),
    uniqueIndex("repositories_env_path_uq").on(t.environmentId, t.path),
    uniqueIndex("repositories_env_full_name_uq").on(t.environmentId, t.fullName),
  ],
);

/**
 * GitHub App installations an organisation's human completed (install link → callback). A
 * repository can only be registered against an installation of its own organisation.
 */
export const githubInstallations = pgTable(
  "github_installations",
  {
    installationId: bigint("installation_id", { mode: "number" }).primaryKey(),
    organizationId: organizationRef(),
    account: text("account").notNull(),
    installedBy: text("installed_by").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [index("github_installations_org_idx").on(t.organizationId)],
);
