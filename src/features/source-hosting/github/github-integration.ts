import type { SourceHost } from "../source-host.ts";
import type { UserInstallation } from "./installer-access.ts";

/** A pull request event that ends a run's review. */
export type PullRequestOutcome = {
  installationId: number;
  fullName: string;
  branch: string;
  merged: boolean;
  prUrl: string;
};

/**
 * The GitHub App, as patchbay uses it: an install link for people, repositories through an
 * installation, the source host for runs, and verified webhooks. No call here merges, and the
 * App asks for contents, pull requests and metadata only — never administration.
 */
export interface GithubIntegration {
  /** `https://github.com/apps/<slug>/installations/new?state=…` */
  installUrl(state: string): string;
  /**
   * The installation as the GitHub user who authorised the App with `code` (the web-flow code
   * GitHub adds to the install callback) sees it, or undefined when that user cannot access it.
   * Throws `invalid_request` for an incorrect or expired code.
   */
  installationOfUser(args: { code: string; installationId: number }): Promise<UserInstallation | undefined>;
  getRepository(args: {
    installationId: number;
    fullName: string;
  }): Promise<{ fullName: string; defaultBranch: string }>;
  /** Repositories the installation was given access to (the human's selection on GitHub). */
  listRepositories(installationId: number): Promise<{ fullName: string; defaultBranch: string }[]>;
  host: SourceHost;
  /**
   * Verifies `X-Hub-Signature-256` over the raw body and decodes the event. Returns the review
   * outcome for a closed pull request, undefined for events that change no run; throws
   * `invalid_webhook_signature` for a bad signature.
   */
  receiveWebhook(args: {
    id: string;
    name: string;
    signature: string;
    body: string;
  }): Promise<PullRequestOutcome | undefined>;
}
