// The floor servers of bench:startup: what any service on the same engines pays to become ready.
// `pglite`: opens (or, for an empty directory, creates) the PGlite database at
// $PATCHBAY_DATA_DIR/pglite, runs one query, serves a bare Hono `/readyz`. `postgres`: a
// postgres.js pool on $DATABASE_URL, one query, the same bare server. `postgres-code`: the same,
// after loading patchbay's server bundle (dist/server.js) without starting any of it — what
// holding patchbay's code costs a process, before it does anything.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import postgres from "postgres";

const kind = process.argv[2];
if (kind === "pglite") {
  const dataDir = process.env.PATCHBAY_DATA_DIR as string;
  mkdirSync(dataDir, { recursive: true });
  // PGlite's defaults; FLOOR_SHARED_BUFFERS (bench:startup's row without a goal) sets the buffer
  // pool as patchbay sets its own.
  const buffers = process.env.FLOOR_SHARED_BUFFERS;
  const db = new PGlite({
    dataDir: join(dataDir, "pglite"),
    ...(buffers ? { startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${buffers}`] } : {}),
  });
  await db.query("select 1");
} else {
  if (kind === "postgres-code") await import(new URL("../../dist/server.js", import.meta.url).href);
  const sql = postgres(process.env.DATABASE_URL as string, { max: 10 });
  await sql`select 1`;
}
const app = new Hono().get("/readyz", (c) => c.json({ status: "ready" }));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: "127.0.0.1" });
