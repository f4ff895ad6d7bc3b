/** A route as Hono lists it (`app.routes`): middleware entries have the method `ALL`. */
type RouteEntry = { method: string; path: string };

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `/environments/:environmentId/tasks` → a pattern where each `:param` is one path segment. */
export const patternOf = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split("/")
      .map((segment) => (segment.startsWith(":") ? "[^/]+" : literal(segment)))
      .join("/")}/?$`,
  );

/**
 * The methods served on a path under `prefix`, so that a known path asked with another method is a 405 with an
 * `Allow` header (RFC 9110 §15.5.6) rather than a 404 that reads as "no such resource". Built
 * once, on first use, from the app's own route table: a route is covered the day it is added.
 */
export function allowedMethods(
  routes: () => readonly RouteEntry[],
  prefix: string,
): (path: string) => string[] {
  let table: { method: string; pattern: RegExp }[] | undefined;
  return (path) => {
    if (!path.startsWith(prefix)) return [];
    table ??= routes()
      .filter((route) => route.method !== "ALL" && route.path.startsWith(prefix))
      .map((route) => ({ method: route.method, pattern: patternOf(route.path) }));
    return [
      ...new Set(table.filter((route) => route.pattern.test(path)).map((route) => route.method)),
    ].sort();
  };
}
