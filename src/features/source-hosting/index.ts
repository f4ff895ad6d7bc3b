// The public entry of features/source-hosting: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export type { GithubAppSettings, GithubIntegration, PullRequestOutcome } from "./github/github-app.ts";
export { githubIntegration } from "./github/github-app.ts";
export { githubInstallUrl } from "./github/install-state.ts";
export { localGitHost } from "./local-git-host.ts";
export type { SourceHost } from "./source-host.ts";
