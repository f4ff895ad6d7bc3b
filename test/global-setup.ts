import { bundleIsCurrent } from "../bin/bundle-state.js";

/**
 * Brings dist/ up to date once, before any test spawns `bin/patchbay.js`: after a source edit,
 * each spawned command would otherwise rebuild the bundle itself, several at once, inside the
 * time its test gives the command. CI's clean clone builds it at `npm ci`, so this is a no-op there.
 */
export default async function setup(): Promise<void> {
  if (bundleIsCurrent()) return;
  const { buildBundle } = await import("../scripts/build.ts");
  await buildBundle();
}
