// The public entry of features/repositories: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export type { RepositoryRow } from "./read-repositories.ts";
export { repositoryForService } from "./read-repositories.ts";
export type { RepositoryReference } from "./repository-reference.ts";
export {
  findReferencedRepository,
  linkedInstallation,
  parseRepositoryReference,
} from "./repository-reference.ts";
