// The public entry of features/api-keys: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { notifyAuthChanged } from "./auth-changes.ts";
export { generateApiKeySecret, hashApiKeySecret } from "./key-secret.ts";
export { PermissionSchema } from "./schemas.ts";
