/**
 * The layering `npm run lint` holds the code to (README "Architecture"):
 * transports → features → platform, never upward; no import cycles.
 * The composition root (src/main.ts, src/app.ts, src/startup.ts) may reach every layer.
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle: modules that cannot be understood, tested or loaded one without the other.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "platform-stays-below",
      severity: "error",
      comment:
        "Platform modules (db, vault, egress, sandbox, queue, audit, logging, payments, mcp-client) serve features and transports; they import neither.",
      from: { path: "^src/platform/" },
      to: { path: "^src/(features|transports)/|^src/(app|main|startup)\\.ts$" },
    },
    {
      name: "features-below-transports",
      severity: "error",
      comment:
        "Features hold the verbs; the doors (REST, MCP, x402, OTLP, web, CLI, OAuth) call them, never the reverse.",
      from: { path: "^src/features/" },
      to: { path: "^src/transports/|^src/(app|main|startup)\\.ts$" },
    },
    {
      name: "core-below-everything",
      severity: "error",
      comment:
        "The shared core (deps, context, errors, ids, version, permissions, schemas) is imported by every layer and imports no feature or transport.",
      from: {
        path: "^src/(config-error|context|errors|ids|version|permissions|oauth-resources|schemas|actor)\\.ts$",
      },
      to: { path: "^src/(features|transports)/|^src/(app|main|startup)\\.ts$" },
    },
    {
      name: "deps-names-services-by-type",
      severity: "error",
      comment:
        "deps.ts names the services start-up builds (some are a feature's, like the telemetry runtime); it may refer to their types, never load a feature or a door.",
      from: { path: "^src/deps\\.ts$" },
      to: {
        path: "^src/(features|transports)/|^src/(app|main|startup)\\.ts$",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "features-form-no-circle",
      severity: "error",
      scope: "folder",
      comment:
        "Business areas depend on each other one way (remediations reads repositories, agent onboarding starts remediations): no circle of feature folders, so each area can be read from the ones below it.",
      from: { path: "^src/features/" },
      to: { path: "^src/features/", circular: true },
    },
    {
      name: "features-meet-at-their-entry",
      severity: "error",
      comment:
        "A business area reaches another only through that area's public entry, its index.ts: what an area offers the others is one list, and the rest of its files may change freely.",
      from: { path: "^src/features/([^/]+)/" },
      to: { path: "^src/features/", pathNot: ["^src/features/$1/", "^src/features/[^/]+/index\\.ts$"] },
    },
    {
      name: "no-test-code-in-product",
      severity: "error",
      comment: "Product code never imports test helpers or test files.",
      from: { path: "^src/", pathNot: "\\.test\\.ts$" },
      to: { path: "^test/|\\.test\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.test\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
