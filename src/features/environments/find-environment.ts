import { and, eq, is, sql } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { ServiceContext } from "../../context.ts";
import { type Db, pointReads } from "../../db/client.ts";
import { environments } from "../../db/schema/environments.ts";
import { AppError } from "../../errors.ts";

type EnvironmentRow = typeof environments.$inferSelect;

/**
 * The lookup every environment-scoped read makes, as a prepared statement built once per
 * database handle: drizzle does not rebuild the SQL per call, and on PostgreSQL the statement
 * is parsed and planned once per connection (one round trip per call instead of two). It runs
 * on the handle's point-read connection (`pointReads`), where concurrent lookups share writes.
 */
const buildLookup = (db: Db) =>
  pointReads(db)
    .select()
    .from(environments)
    .where(
      and(
        eq(environments.id, sql.placeholder("environmentId")),
        eq(environments.organizationId, sql.placeholder("organizationId")),
      ),
    )
    .limit(1)
    .prepare("find_environment");

const lookups = new WeakMap<Db, ReturnType<typeof buildLookup>>();

/**
 * The tenancy gate for everything under an environment: the row is looked up together with the
 * caller's organisation, so another organisation's environment is indistinguishable from a
 * missing one (404, never 403). `forUpdate` locks the row inside a transaction.
 */
export async function findEnvironment(
  db: Db,
  ctx: ServiceContext,
  environmentId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<EnvironmentRow> {
  const organizationId = ctx.actor.organizationId;
  const [row] = await select(db, environmentId, organizationId, opts.forUpdate === true);
  if (!row) throw new AppError("not_found", `Environment ${environmentId} was not found.`);
  return row;
}

function select(
  db: Db,
  environmentId: string,
  organizationId: string,
  forUpdate: boolean,
): Promise<EnvironmentRow[]> {
  // Only database handles are ever in `lookups`, so a hit needs no further check.
  const prepared = forUpdate ? undefined : lookups.get(db);
  if (prepared) return prepared.execute({ environmentId, organizationId });
  // A prepared statement runs on the client it was built for, never inside someone's
  // transaction: transactions (and row locks) take the dynamic query.
  if (forUpdate || is(db, PgTransaction)) {
    const query = db
      .select()
      .from(environments)
      .where(and(eq(environments.id, environmentId), eq(environments.organizationId, organizationId)))
      .limit(1);
    return forUpdate ? query.for("update") : query;
  }
  const lookup = buildLookup(db);
  lookups.set(db, lookup);
  return lookup.execute({ environmentId, organizationId });
}
