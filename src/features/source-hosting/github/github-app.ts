import { App } from "@octokit/app";
// @octokit/app's own client (a pinned dependency of it): only to point it at another base URL.
import { Octokit } from "@octokit/core";
import { AppError } from "../../../errors.ts";
import { githubHost } from "./github-host.ts";
import type { GithubIntegration, PullRequestOutcome } from "./github-integration.ts";
import { installationOfUser } from "./installer-access.ts";

type RequestError = { status?: number };
const statusOf = (error: unknown) => (error as RequestError | undefined)?.status;

export type GithubAppSettings = {
  appId: string;
  privateKey: string;
  webhookSecret: string;
  /** The App's URL name: the install link is `https://github.com/apps/<slug>/installations/new`. */
  slug: string;
  /**
   * The App's OAuth client: the install callback exchanges GitHub's `code` with these to learn
   * which GitHub user came back, and binds only an installation that user can access.
   */
  clientId: string;
  /** Secret; never logged. */
  clientSecret: string;
  /** REST API base (GitHub Enterprise Server, or a replay server in tests). */
  apiUrl: string;
  /** Where people install the App (differs from apiUrl on GitHub Enterprise Server). */
  webUrl: string;
};

/**
 * The GitHub App through `@octokit/app`: App JWT for installations, installation tokens for
 * repositories, and its OAuth client for the user who comes back from installing it.
 */
export function githubIntegration(settings: GithubAppSettings): GithubIntegration {
  const app = new App({
    appId: settings.appId,
    privateKey: settings.privateKey,
    webhooks: { secret: settings.webhookSecret },
    oauth: { clientId: settings.clientId, clientSecret: settings.clientSecret },
    Octokit: Octokit.defaults({ baseUrl: settings.apiUrl, userAgent: "patchbay" }),
  });
  const installation = (installationId: number) => app.getInstallationOctokit(installationId);

  return {
    installUrl(state) {
      return `${settings.webUrl}/apps/${encodeURIComponent(settings.slug)}/installations/new?state=${encodeURIComponent(state)}`;
    },

    installationOfUser(args) {
      return installationOfUser((code) => app.oauth.getUserOctokit({ code }), args);
    },

    async getRepository({ installationId, fullName }) {
      const [owner = "", repo = ""] = fullName.split("/");
      try {
        const octokit = await installation(installationId);
        const { data } = await octokit.request("GET /repos/{owner}/{repo}", { owner, repo });
        return { fullName: data.full_name, defaultBranch: data.default_branch };
      } catch (error) {
        const status = statusOf(error);
        if (status === 404 || status === 403 || status === 401) {
          throw new AppError(
            "installation_required",
            `The App installation ${installationId} cannot read ${fullName}: select the repository in the installation's settings on GitHub.`,
            { installationId, fullName },
          );
        }
        throw error;
      }
    },

    async listRepositories(installationId) {
      const octokit = await installation(installationId);
      const { data } = await octokit.request("GET /installation/repositories", { per_page: 100 });
      return data.repositories.map((r) => ({ fullName: r.full_name, defaultBranch: r.default_branch }));
    },

    host: githubHost(installation),

    async receiveWebhook({ name, signature, body }) {
      if (!signature || !(await app.webhooks.verify(body, signature).catch(() => false))) {
        throw new AppError(
          "invalid_webhook_signature",
          "The webhook signature does not match the App's secret.",
        );
      }
      if (name !== "pull_request") return undefined;
      const payload = JSON.parse(body) as {
        action?: string;
        installation?: { id?: number };
        repository?: { full_name?: string };
        pull_request?: { merged?: boolean; html_url?: string; head?: { ref?: string } };
      };
      const pr = payload.pull_request;
      const branch = pr?.head?.ref;
      if (payload.action !== "closed" || !branch?.startsWith("patchbay/")) return undefined;
      const outcome: PullRequestOutcome = {
        installationId: payload.installation?.id ?? 0,
        fullName: payload.repository?.full_name ?? "",
        branch,
        merged: pr?.merged === true,
        prUrl: pr?.html_url ?? "",
      };
      return outcome;
    },
  };
}
