import type { App } from "@octokit/app";
import type { Octokit } from "@octokit/core";
import { AppError } from "../../../errors.ts";
import { loadOnce } from "../../../platform/load-once.ts";
import type { SourceHost } from "../source-host.ts";
import { githubHost } from "./github-host.ts";

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
  getRepository(args: { installationId: number; fullName: string }): Promise<RemoteRepository>;
  /** Repositories the installation was given access to (the human's selection on GitHub). */
  listRepositories(installationId: number): Promise<RemoteRepository[]>;
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

type RemoteRepository = { fullName: string; defaultBranch: string };
const statusOf = (error: unknown) => (error as { status?: unknown } | undefined)?.status;

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
  // Octokit (~0.1 MB of code) loads with the App's first call, not at every start of a server
  // configured with an App.
  const loadApp = loadOnce(async (): Promise<App> => {
    const [{ App }, { Octokit }] = await Promise.all([
      import("@octokit/app"),
      // @octokit/app's own client (a pinned dependency of it): only to point it at another base URL.
      import("@octokit/core"),
    ]);
    return new App({
      appId: settings.appId,
      privateKey: settings.privateKey,
      webhooks: { secret: settings.webhookSecret },
      oauth: { clientId: settings.clientId, clientSecret: settings.clientSecret },
      Octokit: Octokit.defaults({ baseUrl: settings.apiUrl, userAgent: "patchbay" }),
    });
  });
  const installation = async (installationId: number) =>
    (await loadApp()).getInstallationOctokit(installationId);

  return {
    installUrl(state) {
      return `${settings.webUrl}/apps/${encodeURIComponent(settings.slug)}/installations/new?state=${encodeURIComponent(state)}`;
    },

    installationOfUser(args) {
      return installationOfUser(async (code) => (await loadApp()).oauth.getUserOctokit({ code }), args);
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
      const app = await loadApp();
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
      return {
        installationId: payload.installation?.id ?? 0,
        fullName: payload.repository?.full_name ?? "",
        branch,
        merged: pr?.merged === true,
        prUrl: pr?.html_url ?? "",
      };
    },
  };
}

const PER_PAGE = 100;
/** Pages of the user's installations read at most; a user with more is refused (fails closed). */
const MAX_PAGES = 10;

/** An installation as the installing user sees it: its account and when it was made. */
type UserInstallation = { account: string; createdAt: string };

/**
 * The code becomes a user access token (`signIn`), and the installation must be among
 * `GET /user/installations` for that token: GitHub's documented check, since the callback's
 * `installation_id` is whatever its caller wrote.
 */
async function installationOfUser(
  signIn: (code: string) => Promise<Octokit>,
  args: { code: string; installationId: number },
): Promise<UserInstallation | undefined> {
  let user: Octokit;
  try {
    user = await signIn(args.code);
  } catch (error) {
    throw exchangeFailure(error);
  }
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await user.request("GET /user/installations", { per_page: PER_PAGE, page });
    const found = data.installations.find((i) => i.id === args.installationId);
    if (found) {
      const account =
        found.account && "login" in found.account ? found.account.login : (found.account?.name ?? "");
      return { account, createdAt: found.created_at };
    }
    if (page * PER_PAGE >= data.total_count) return undefined;
  }
  return undefined;
}

/**
 * GitHub refuses an exchange with 200 and an `error` field, which @octokit/oauth-methods throws.
 * The thrown error holds the request body (client secret and code), so it never travels further,
 * not even as a `cause` the error log would print.
 */
function exchangeFailure(error: unknown): Error {
  const refusal = (error as { response?: { data?: { error?: unknown } } } | undefined)?.response?.data?.error;
  if (refusal === "bad_verification_code") {
    return new AppError(
      "invalid_request",
      "GitHub says this authorization code is incorrect or expired (a code works once, for ten minutes); install or authorise the App again through a fresh link.",
    );
  }
  if (refusal === "incorrect_client_credentials" || refusal === "redirect_uri_mismatch") {
    return new AppError(
      "provider_unavailable",
      "GitHub refused the App's OAuth client; the operator should check PATCHBAY_GITHUB_CLIENT_ID, PATCHBAY_GITHUB_CLIENT_SECRET and the App's callback URL.",
    );
  }
  const status = statusOf(error);
  const reason =
    typeof refusal === "string" ? refusal : typeof status === "number" ? `HTTP ${status}` : "no answer";
  return new Error(`GitHub's OAuth code exchange failed (${reason}).`);
}
