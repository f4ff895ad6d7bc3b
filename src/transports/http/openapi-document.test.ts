import { readFileSync } from "node:fs";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { createApiRoutes } from "../../app.ts";
import { version } from "../../version.ts";
import { buildOpenApiDocument } from "./openapi-document.ts";

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
});
