// The public entry of features/connections: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { assertRevision, findConnection } from "./find-connection.ts";
export { remoteAuthFor } from "./remote-auth.ts";
export { setConnectionCredential } from "./set-connection-credential.ts";
export { toolAccess } from "./tool-access.ts";
export { deriveReadiness } from "./view-connection.ts";
