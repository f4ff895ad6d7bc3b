import { readFileSync } from "node:fs";
import { getRefId } from "@asteasolutions/zod-to-openapi";
import { ZodType } from "zod";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { createApiRoutes } from "../../app.ts";
import { version } from "../../version.ts";
import { buildOpenApiDocument } from "./openapi-document.ts";

type AnySchema = ZodType & { _zod: { def: Record<string, unknown> } };
// Zod's checks carry `_zod` too; only schemas can claim a name.
const isSchema = (value: unknown): value is AnySchema => value instanceof ZodType;

/**
 * Every component name claimed by a zod schema reachable from the router's definitions, with
 * the distinct schemas claiming it. `.openapi({ … })` and `.optional()` on a named schema make
 * new objects around the same zod definition, so a claimant is that definition, reached through
 * optional/nullable/default wrappers: two definitions under one name are two different types,
 * and the generator silently keeps whichever it meets first.
 */
function componentNameClaims(definitions: unknown): Map<string, Set<unknown>> {
  const claims = new Map<string, Set<unknown>>();
  const seen = new Set<unknown>();
  const unwrap = (schema: AnySchema): AnySchema => {
    const inner = schema._zod.def.innerType;
    return ["optional", "nullable", "default", "prefault", "readonly"].includes(
      String(schema._zod.def.type),
    ) && isSchema(inner)
      ? unwrap(inner)
      : schema;
  };
  const walk = (value: unknown): void => {
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    if (isSchema(value)) {
      const name = getRefId(value);
      if (name) {
        const claimants = claims.get(name) ?? new Set();
        claimants.add(unwrap(value)._zod.def);
        claims.set(name, claimants);
      }
      const def = value._zod.def;
      if (typeof def.getter === "function") walk(def.getter());
      for (const child of Object.values(def)) walk(child);
      return;
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) walk(child);
  };
  walk(definitions);
  return claims;
}

describe("OpenAPI document", () => {
  test("is OpenAPI 3.1.1, served at /api/v1/openapi.json without authentication", async ({ app }) => {
    const res = await app.request("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.1");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/me",
        "/environments",
        "/environments/{environmentId}",
        "/api-keys",
        "/api-keys/{apiKeyId}",
      ]),
    );
  });

  test("the committed docs/openapi.json matches the code (run `npm run openapi:emit`)", () => {
    const committed = JSON.parse(
      readFileSync(new URL("../../../docs/openapi.json", import.meta.url), "utf8"),
    );
    const current = JSON.parse(JSON.stringify(buildOpenApiDocument(createApiRoutes(), version)));
    expect(current).toEqual(committed);
  });

  test("every mutation documents Idempotency-Key; every revisioned mutation If-Match", () => {
    const doc = buildOpenApiDocument(createApiRoutes(), version) as unknown as {
      paths: Record<string, Record<string, { operationId: string; parameters?: { name: string }[] }>>;
    };
    const env = doc.paths["/environments/{environmentId}"]?.patch;
    expect(env?.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(["Idempotency-Key", "If-Match"]),
    );
    expect(doc.paths["/environments"]?.post?.parameters?.map((p) => p.name)).toContain("Idempotency-Key");
  });

  test("no two schemas claim one component name", () => {
    const claims = componentNameClaims(createApiRoutes().openAPIRegistry.definitions);
    const shared = [...claims].filter(([, claimants]) => claimants.size > 1).map(([name]) => name);
    expect(shared, "component names claimed by two different schemas").toEqual([]);
    // The walk reaches nested schemas too (ProblemSummary only appears inside ProblemPage).
    expect([...claims.keys()]).toEqual(expect.arrayContaining(["Problem", "ProblemSummary", "StackFrame"]));
  });
});
