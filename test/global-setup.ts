import { bundleIsCurrent } from "../bin/bundle-state.js";

/**
 * Brings dist/ up to date once, before any test spawns `bin/patchbay.js` or opens a PGlite
 * database: after a source edit each spawned command would otherwise rebuild the bundle itself,
 * several at once, inside the time its test gives the command; after a new migration every new
 * database would run initdb and every migration instead of loading the template. CI's clean clone
 * builds both at `npm ci`, so this is a no-op there.
 */
export default async function setup(): Promise<void> {
  if (!bundleIsCurrent()) {
    const { buildBundle } = await import("../scripts/build.ts");
    await buildBundle();
  }
  const template = await import("../src/platform/db/pglite-template.ts");
  if (!template.hasMigratedTemplate()) await template.buildMigratedTemplate();
}
