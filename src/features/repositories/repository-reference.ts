import { and, asc, eq, sql } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { githubInstallations, repositories } from "../../platform/db/schema/repositories.ts";
import type { RepositoryRow } from "./read-repositories.ts";
import { GITHUB_FULL_NAME } from "./schemas.ts";

/**
 * A repository as an agent knows it: a registration's id, or the source host's `owner/name`.
 * Naming one never registers it: only a registration a human made in the same organisation and
 * environment is ever used.
 */
export type RepositoryReference = { id: string } | { fullName: string };

const REPOSITORY_ID = /^rep_[0-9a-z]{1,60}$/;

/** Both forms as one JSON Schema `pattern`, for the schemas agents read (the check is below). */
export const REPOSITORY_REFERENCE_PATTERN = `^(${REPOSITORY_ID.source.slice(1, -1)}|${GITHUB_FULL_NAME.source.slice(1, -1).replace("\\/", "/")})$`;

/** The reference a name makes, or `invalid_repository_name` (400) for anything else. */
export function parseRepositoryReference(name: string): RepositoryReference {
  if (REPOSITORY_ID.test(name)) return { id: name };
  // `.` and `..` match GitHub's character set but are no repository (and read like paths).
  if (GITHUB_FULL_NAME.test(name) && !name.split("/").some((part) => part === "." || part === "..")) {
    return { fullName: name };
  }
  throw new AppError(
    "invalid_repository_name",
    "`repository` must be a registered repository's id (rep_…) or a GitHub owner/name such as acme/checkout.",
    { field: "repository" },
  );
}

/**
 * The registration a reference names in exactly this organisation and environment (another
 * tenant's id or `owner/name` is never found). GitHub names compare without case, as GitHub does.
 */
export async function findReferencedRepository(
  db: Db,
  scope: { organizationId: string; environmentId: string },
  ref: RepositoryReference,
): Promise<RepositoryRow | undefined> {
  const [row] = await db
    .select()
    .from(repositories)
    .where(
      and(
        eq(repositories.organizationId, scope.organizationId),
        eq(repositories.environmentId, scope.environmentId),
        "id" in ref
          ? eq(repositories.id, ref.id)
          : sql`lower(${repositories.fullName}) = lower(${ref.fullName})`,
      ),
    )
    .limit(1);
  return row;
}

/** The organisation's first linked GitHub App installation, if a human completed one. */
export async function linkedInstallation(db: Db, organizationId: string): Promise<number | undefined> {
  const [row] = await db
    .select({ id: githubInstallations.installationId })
    .from(githubInstallations)
    .where(eq(githubInstallations.organizationId, organizationId))
    .orderBy(asc(githubInstallations.createdAt))
    .limit(1);
  return row?.id;
}
