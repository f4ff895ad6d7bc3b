/**
 * The baseline for `npm run bench:api`: a bare Hono app on @hono/node-server that answers
 * `GET /api/v1/environments/:id` with the same JSON document as patchbay, from memory —
 * no middleware, no authentication, no database. Still serialises the object per request,
 * as the real route does.
 *
 * Env: PORT (required), HOST (default 127.0.0.1), BENCH_BODY (the JSON document to serve).
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";

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

const server = serve({ fetch: app.fetch, port, hostname: host }, () => {
  process.stdout.write(`bare-server listening on http://${host}:${port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
