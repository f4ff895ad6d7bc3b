// The public entry of features/publishable-keys: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { generatePublishableKey, newPublishableKeyId } from "./key-value.ts";
export type { IngestPrincipal } from "./resolve-publishable-key.ts";
