type Bazaar = typeof import("@x402/extensions/bazaar");

let bazaar: Bazaar | undefined;

/**
 * The x402 Bazaar extension's code, loaded by whatever first reads a paid route's `extensions`
 * (the resource server's first build, the catalog): it brings ajv, ~0.2 MB of code that every
 * start would otherwise load whether or not anyone pays.
 */
export async function loadBazaar(): Promise<Bazaar> {
  bazaar ??= await import("@x402/extensions/bazaar");
  return bazaar;
}

/** The extension's code once `loadBazaar` has run; reading a route's extensions before is a bug. */
export function loadedBazaar(): Bazaar {
  if (!bazaar) throw new Error("A paid route's x402 extensions were read before loadBazaar().");
  return bazaar;
}
