// The public entry of features/environments: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { callerEnvironment, findEnvironment, findInEnvironment } from "./find-environment.ts";
export { EnvironmentParams } from "./schemas.ts";
