import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { environments } from "./environments.ts";
import { organizations } from "./organizations.ts";

export const repositoryProviders = ["local-git", "github"] as const;
export type RepositoryProvider = (typeof repositoryProviders)[number];

/**
 * A source repository a human registered for remediation in one environment. `services` maps
 * the problems of those services to this repository. Registered by people only: an agent can
 * never name a path or a repository (issue 9's human boundary).
 */
export const repositories = pgTable(
  "repositories",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    environmentId: uuid("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
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
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
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
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    account: text("account").notNull(),
    installedBy: text("installed_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index("github_installations_org_idx").on(t.organizationId)],
);
