import { timestamp } from "drizzle-orm/pg-core";

/** A point in time as every table but telemetry keeps it: with its time zone, to the millisecond. */
export const millis = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });
