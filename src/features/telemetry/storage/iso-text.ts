import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";

/**
 * A timestamp as ISO 8601 text with microseconds, formatted by the database: the drivers would
 * otherwise answer in their own formats (postgres.js under drizzle passes PostgreSQL's text
 * through; PGlite builds a Date, which keeps milliseconds only).
 */
export const isoText = (column: AnyPgColumn | SQL): SQL<string> =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
