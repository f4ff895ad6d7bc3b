/**
 * The baseline for `npm run bench:api`: a bare Hono app on @hono/node-server that answers
 * `GET /api/v1/environments/:id` with the same JSON document as patchbay, from memory —
 * no middleware, no authentication, no database. Still serialises the object per request,
 * as the real route does.
 *
 * With BENCH_DATABASE_URL it also serves the floor of a read that makes one query:
 * `GET /floor/api-keys/:organizationId` reads a page of the organisation's API keys as patchbay's
 * `GET /api/v1/api-keys` does (the same prepared keyset query, through a postgres.js pool of the
 * same size) and serialises the rows — no authentication, no mapping, no validation.
 *
 * And the floor of a write: `POST /floor/write/:organizationId` inserts one row into a table of its
 * own (`bench_floor_writes`, created here in the bench's scratch database), as its own committed
 * transaction with the server's `synchronous_commit` (the WAL flush included), through the same
 * pool, and answers 201 with the row — no authentication, no idempotency key, no audit, no body
 * validation.
 *
 * And the floor of the services aggregation: `GET /floor/services/:environmentId` runs patchbay's own
 * statement (`queryServiceHealth`: the environment's services with their entry spans' counts and
 * percentiles over the last hour) as one prepared query and serialises its rows — what that
 * aggregation costs PostgreSQL and a bare server, before any authentication or shaping.
 *
 * Env: PORT (required), HOST (default 127.0.0.1), BENCH_BODY (the JSON document to serve),
 * BENCH_DATABASE_URL (optional: patchbay's database).
 */
import { serve } from "@hono/node-server";
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { Hono } from "hono";
import postgres from "postgres";
import { queryServiceHealth } from "../../src/features/telemetry/storage/store-reads.ts";
import type { Db } from "../../src/platform/db/client.ts";

const port = Number(process.env.PORT);
const host = process.env.HOST ?? "127.0.0.1";
const raw = process.env.BENCH_BODY;
if (!Number.isInteger(port) || port <= 0 || !raw) {
  process.stderr.write("bare-server: PORT and BENCH_BODY are required\n");
  process.exit(2);
}
const document: unknown = JSON.parse(raw);
const revision =
  typeof document === "object" && document !== null && "revision" in document
    ? String(document.revision)
    : "0";

const app = new Hono();
app.get("/healthz", (c) => c.json({ status: "ok" }));
app.get("/api/v1/environments/:id", (c) => {
  c.header("etag", `"${revision}"`);
  return c.json(document as object, 200);
});

const databaseUrl = process.env.BENCH_DATABASE_URL;
if (databaseUrl) {
  const sql = postgres(databaseUrl, { max: 10, prepare: true, onnotice: () => {} });
  app.get("/floor/api-keys/:organizationId", async (c) => {
    const rows = await sql`
      select id, organization_id, user_id, name, prefix, permissions, created_at, last_used_at, revoked_at
      from api_keys where organization_id = ${c.req.param("organizationId")}
      order by created_at, id limit 51`;
    return c.json({ items: rows, nextCursor: null }, 200);
  });

  // patchbay's statement text and parameters, run as one prepared query (as patchbay prepares it).
  const dialect = new PgDialect();
  const prepared = {
    execute(query: SQL) {
      const { sql: text, params } = dialect.sqlToQuery(query);
      return sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true });
    },
  } as unknown as Db;
  const HOUR_MS = 3_600_000;
  app.get("/floor/services/:environmentId", async (c) => {
    const now = Date.now();
    const items = await queryServiceHealth(prepared, c.req.param("environmentId"), {
      from: new Date(now - HOUR_MS).toISOString(),
      to: new Date(now).toISOString(),
      after: undefined,
      limit: 51,
    });
    return c.json({ items, nextCursor: null }, 200);
  });

  await sql`
    create table if not exists bench_floor_writes (
      id text primary key,
      organization_id text not null,
      body jsonb not null,
      created_at timestamptz not null default now()
    )`;
  app.post("/floor/write/:organizationId", async (c) => {
    const body: unknown = await c.req.json();
    const [row] = await sql`
      insert into bench_floor_writes (id, organization_id, body)
      values (${crypto.randomUUID()}, ${c.req.param("organizationId")}, ${sql.json(body as postgres.JSONValue)})
      returning id, organization_id, body, created_at`;
    return c.json(row, 201);
  });
}

const server = serve({ fetch: app.fetch, port, hostname: host }, () => {
  process.stdout.write(`bare-server listening on http://${host}:${port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
