import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { z } from "zod";
import type { PaidRoutes, RoutePattern } from "./paid-routes.ts";
import type { X402Route } from "./route.ts";

/** The gate's table of paid routes, each declaring the Bazaar discovery extension from its schemas. */
export function paidTable(routes: readonly X402Route[]): PaidRoutes {
  const table: PaidRoutes = {};
  for (const route of routes) {
    if (!route.paid) continue;
    const { input, pathParams, output, outputExample, inputExample, pathParamsExample } = route.paid;
    const schemas = {
      ...(inputExample ? { input: inputExample } : {}),
      ...(pathParamsExample ? { pathParams: pathParamsExample } : {}),
      ...(input ? { inputSchema: jsonSchema(input, "input") } : {}),
      ...(pathParams ? { pathParamsSchema: jsonSchema(pathParams, "input") } : {}),
      output: { schema: jsonSchema(output, "output"), ...(outputExample ? { example: outputExample } : {}) },
    };
    const bazaar =
      route.method === "POST"
        ? declareDiscoveryExtension({ ...schemas, bodyType: "json" })
        : declareDiscoveryExtension(schemas);
    table[`${route.method} ${route.path}` as RoutePattern] = {
      price: route.paid.price,
      description: route.description,
      extensions: bazaar,
    };
  }
  return table;
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return withoutRedundantFormats(rest) as Record<string, unknown>;
}

/**
 * Drops `format` where a `pattern` says the same (zod emits both for uuids): the SDK validates
 * these schemas with a bare Ajv that warns about every format it does not know.
 */
function withoutRedundantFormats(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRedundantFormats);
  if (!node || typeof node !== "object") return node;
  const entries = Object.entries(node as Record<string, unknown>);
  const hasPattern = entries.some(([key]) => key === "pattern");
  return Object.fromEntries(
    entries
      .filter(([key]) => !(key === "format" && hasPattern))
      .map(([key, value]) => [key, withoutRedundantFormats(value)]),
  );
}
