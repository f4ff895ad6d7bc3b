/**
 * The permissions patchbay's GitHub App asks for, for the App manifest an operator creates it
 * from. Contents (read and write: a branch and a commit), pull requests (write: a draft pull
 * request), metadata (read, mandatory). Never `administration`, never `workflows`; and patchbay
 * has no code path that merges — the pull request is where a human decides.
 */
export const GITHUB_APP_PERMISSIONS = {
  contents: "write",
  pull_requests: "write",
  metadata: "read",
} as const;

export const GITHUB_APP_EVENTS = ["pull_request"] as const;

/**
 * A GitHub App manifest (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest).
 * The App requests user authorisation on install: GitHub then sends the person to the callback
 * URL (a setup URL would be ignored) with a `code` that proves which GitHub user installed it,
 * which the callback needs before it binds the installation to an organisation.
 */
export function githubAppManifest(baseUrl: string) {
  return {
    name: "patchbay",
    url: baseUrl,
    hook_attributes: { url: `${baseUrl}/integrations/github/webhook`, active: true },
    request_oauth_on_install: true,
    callback_urls: [`${baseUrl}/integrations/github/callback`],
    public: false,
    default_permissions: GITHUB_APP_PERMISSIONS,
    default_events: [...GITHUB_APP_EVENTS],
  };
}
