/**
 * The rows of a raw `db.execute(sql…)`: postgres.js answers a row array, PGlite a `{ rows }`
 * result. One reader for both engines, wherever raw SQL is run.
 */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result;
  if (typeof result === "object" && result !== null && "rows" in result && Array.isArray(result.rows)) {
    return result.rows;
  }
  throw new Error("Unexpected result from the database driver: neither a row list nor { rows }.");
}
