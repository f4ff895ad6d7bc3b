import { and, eq, exists, getTableName, is, sql } from "drizzle-orm";
import { type PgColumn, type PgTable, PgTransaction } from "drizzle-orm/pg-core";
import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { type BatchReader, batchReader } from "../../platform/db/batch-reads.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { environments } from "../../platform/db/schema/environments.ts";

type EnvironmentRow = typeof environments.$inferSelect;

/**
 * The lookup every environment-scoped read makes, as a prepared statement built once per
 * database handle: drizzle does not rebuild the SQL per call, and on PostgreSQL the statement
 * is parsed and planned once per connection (one round trip per call instead of two). It is
 * built on the handle's point-read connection (`DatabaseHandle.pointReads`), where concurrent
 * lookups share writes.
 */
const buildLookup = (db: Db) =>
  db
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

/**
 * The same lookup for many (environment, organisation) pairs at once: the lookups of one
 * event-loop turn go out as one query (`batchReader`). Each row is matched on both columns, so
 * it only ever answers the caller that asked for exactly that environment in its organisation.
 */
const buildBatchLookup = (db: Db) =>
  db
    .select()
    .from(environments)
    .where(
      sql`(${environments.id}, ${environments.organizationId}) in (select * from unnest(${sql.placeholder("ids")}::uuid[], ${sql.placeholder("organizationIds")}::text[]))`,
    )
    .prepare("find_environments");

type Key = { environmentId: string; organizationId: string };

const keyId = (environmentId: string, organizationId: string) => `${environmentId} ${organizationId}`;

const batchLookups = perDatabase(buildBatchLookup);

/**
 * Reads many (environment, organisation) pairs in one query: a row is returned only for a pair
 * that matches it on both columns. Exported for tests; requests go through `findEnvironment`.
 */
export function selectEnvironments(db: Db, keys: readonly Key[]): Promise<EnvironmentRow[]> {
  const prepared = batchLookups(db);
  return prepared.execute({
    ids: keys.map((k) => k.environmentId),
    organizationIds: keys.map((k) => k.organizationId),
  });
}

const buildReader = (db: Db): BatchReader<Key, EnvironmentRow> =>
  batchReader<Key, EnvironmentRow>({
    id: (key) => keyId(key.environmentId, key.organizationId),
    readOne: async (key) => (await lookups(db).execute(key))[0],
    readMany: async (keys) =>
      (await selectEnvironments(db, keys)).map((row) => [keyId(row.id, row.organizationId), row] as const),
  });

const readers = new WeakMap<Db, BatchReader<Key, EnvironmentRow>>();

/** A UUID in its canonical text form, as the database returns it (the batch matches on that). */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The tenancy gate for everything under an environment: the row is looked up together with the
 * caller's organisation, so another organisation's environment is indistinguishable from a
 * missing one (404, never 403). `forUpdate` locks the row inside a transaction.
 *
 * Outside a transaction, the lookups of one event-loop turn are one query (`batchReader`): under
 * load that spares postgres.js and PostgreSQL their per-query work for all but one of them.
 */
export async function findEnvironment(
  db: Db,
  ctx: ServiceContext,
  environmentId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<EnvironmentRow> {
  const key = { environmentId, organizationId: ctx.actor.organizationId };
  const row = await select(db, ctx.deps.database.pointReads, key, opts.forUpdate === true);
  if (!row) throw new AppError("not_found", `Environment ${environmentId} was not found.`);
  return row;
}

async function select(db: Db, pointReads: Db, key: Key, forUpdate: boolean) {
  // A prepared statement runs on the client it was built for, never inside someone's
  // transaction: transactions (and row locks) take the dynamic query.
  if (forUpdate || is(db, PgTransaction)) {
    const query = db
      .select()
      .from(environments)
      .where(and(eq(environments.id, key.environmentId), eq(environments.organizationId, key.organizationId)))
      .limit(1);
    return (await (forUpdate ? query.for("update") : query))[0];
  }
  // Ids that are not canonical UUIDs are read on their own: the batch answers by the id as stored.
  if (!CANONICAL_UUID.test(key.environmentId)) return (await lookups(pointReads).execute(key))[0];
  let reader = readers.get(db);
  if (!reader) {
    reader = buildReader(pointReads);
    readers.set(db, reader);
  }
  return reader.load(key);
}

const lookups = perDatabase(buildLookup);

/** A table whose rows each live in one environment of one organisation. */
type EnvironmentScoped = PgTable & { id: PgColumn; environmentId: PgColumn; organizationId: PgColumn };

/**
 * The tenancy gate for a row under an environment (a task, a connection, a repository): the
 * environment of the caller's organisation (else 404), and the row inside exactly that
 * environment (else 404, naming it `what`), so a row is invisible from every other environment.
 * `forUpdate` locks the row for the rest of the transaction; `lockEnvironment` locks the
 * environment row first (verbs that check environment-wide limits).
 */
export async function findInEnvironment<T extends EnvironmentScoped>(
  db: Db,
  ctx: ServiceContext,
  table: T,
  ref: { environmentId: string; id: string; what: string },
  opts: { forUpdate?: boolean; lockEnvironment?: boolean } = {},
): Promise<T["$inferSelect"]> {
  const organizationId = ctx.actor.organizationId;
  /** The row itself: exactly this id, in exactly this environment of the caller's organisation. */
  const inEnvironment = (environmentId: string) =>
    and(
      eq(table.id, ref.id),
      eq(table.environmentId, environmentId),
      eq(table.organizationId, organizationId),
    );
  let row: T["$inferSelect"] | undefined;
  if (opts.forUpdate && !opts.lockEnvironment) {
    // One query instead of two: the environment's check rides in the row lock as an `exists` (the
    // environment is not locked: `of` names the row's table alone). Only when no row comes back
    // is the environment read on its own, so a missing environment is still its own 404.
    [row] = await db
      .select()
      .from(table as PgTable)
      .where(
        and(
          inEnvironment(ref.environmentId),
          exists(
            db
              .select({ one: sql`1` })
              .from(environments)
              .where(
                and(eq(environments.id, ref.environmentId), eq(environments.organizationId, organizationId)),
              ),
          ),
        ),
      )
      .limit(1)
      .for("update", { of: table as PgTable });
    if (!row) await findEnvironment(db, ctx, ref.environmentId);
  } else if (opts.lockEnvironment || is(db, PgTransaction)) {
    await findEnvironment(db, ctx, ref.environmentId, { forUpdate: opts.lockEnvironment === true });
    const query = db
      .select()
      .from(table as PgTable)
      .where(inEnvironment(ref.environmentId))
      .limit(1);
    [row] = opts.forUpdate ? await query.for("update") : await query;
  } else {
    // Outside a transaction both lookups go out together, each batched with the same turn's
    // others (`batchReader`). The environment's verdict comes first, as when they ran in turn.
    const [environment, found] = await Promise.allSettled([
      findEnvironment(db, ctx, ref.environmentId),
      CANONICAL_UUID.test(ref.environmentId)
        ? rowReader(db, ctx.deps.database.pointReads, table).load({
            id: ref.id,
            environmentId: ref.environmentId,
            organizationId,
          })
        : Promise.resolve(undefined),
    ]);
    if (environment.status === "rejected") throw environment.reason;
    if (found.status === "rejected") throw found.reason;
    row = found.value;
    // A spelling of the environment id the batch cannot match on (upper case): read on its own.
    if (!row && !CANONICAL_UUID.test(ref.environmentId)) {
      [row] = await ctx.deps.database.pointReads
        .select()
        .from(table as PgTable)
        .where(inEnvironment(environment.value.id))
        .limit(1);
    }
  }
  if (!row) throw new AppError("not_found", `${ref.what} ${ref.id} was not found in this environment.`);
  return row as T["$inferSelect"];
}

type RowKey = { id: string; environmentId: string; organizationId: string };

const rowKeyId = (key: RowKey) => `${key.id} ${key.environmentId} ${key.organizationId}`;

const rowReaders = new WeakMap<Db, WeakMap<PgTable, BatchReader<RowKey, unknown>>>();

/**
 * The row lookups of one event-loop turn for one table, as one query on the point-read
 * connection: each row is matched on id, environment and organisation together, so it only ever
 * answers the caller that asked for exactly that row in that environment of its organisation.
 */
function rowReader<T extends EnvironmentScoped>(db: Db, pointReads: Db, table: T) {
  let perTable = rowReaders.get(db);
  if (!perTable) {
    perTable = new WeakMap();
    rowReaders.set(db, perTable);
  }
  let reader = perTable.get(table) as BatchReader<RowKey, T["$inferSelect"]> | undefined;
  if (!reader) {
    // Built once per handle and table, with placeholders: drizzle does not rebuild the SQL per
    // call, and each statement is prepared once per connection.
    const name = getTableName(table);
    const one = pointReads
      .select()
      .from(table as PgTable)
      .where(
        and(
          eq(table.id, sql.placeholder("id")),
          eq(table.environmentId, sql.placeholder("environmentId")),
          eq(table.organizationId, sql.placeholder("organizationId")),
        ),
      )
      .limit(1)
      .prepare(`find_${name}_row`);
    const many = pointReads
      .select()
      .from(table as PgTable)
      .where(
        sql`(${table.id}, ${table.environmentId}, ${table.organizationId}) in (select * from unnest(${sql.placeholder("ids")}::${sql.raw(table.id.getSQLType())}[], ${sql.placeholder("environmentIds")}::uuid[], ${sql.placeholder("organizationIds")}::text[]))`,
      )
      .prepare(`find_${name}_rows`);
    reader = batchReader<RowKey, T["$inferSelect"]>({
      id: rowKeyId,
      readOne: async (key) => (await one.execute(key))[0] as T["$inferSelect"] | undefined,
      readMany: async (keys) => {
        const rows = (await many.execute({
          ids: keys.map((k) => k.id),
          environmentIds: keys.map((k) => k.environmentId),
          organizationIds: keys.map((k) => k.organizationId),
        })) as Array<T["$inferSelect"] & RowKey>;
        return rows.map((r) => [rowKeyId(r), r as T["$inferSelect"]] as const);
      },
    });
    perTable.set(table, reader as BatchReader<RowKey, unknown>);
  }
  return reader;
}

/**
 * The environment a call is about: the one named, checked against the caller's organisation like
 * `findEnvironment`, or for a paying wallet its organisation's first (the agent flow's default).
 * Returns its id as stored, so links built from it read the same however the caller spelt it.
 */
export async function callerEnvironment(
  ctx: ServiceContext,
  environmentId: string | undefined,
): Promise<string> {
  if (environmentId) return (await findEnvironment(ctx.deps.db, ctx, environmentId)).id;
  if (ctx.actor.type === "wallet") return ctx.actor.environmentId;
  throw new AppError("invalid_request", "Name the environment: environmentId is required.");
}
