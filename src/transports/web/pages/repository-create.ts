import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { requireOwnerOrAdmin, requirePermission } from "../../../context.ts";
import { isAppError } from "../../../errors.ts";
import { createRepository } from "../../../features/repositories/create-repository.ts";
import { CreateRepositoryBody } from "../../../features/repositories/schemas.ts";
import { createGithubInstallLink } from "../../../features/source-hosting/github/install-link.ts";
import type { WebEnv } from "../env.ts";
import {
  errorSummary,
  type FieldErrors,
  fieldErrorsOf,
  formString,
  inputField,
  parseWith,
  postForm,
  readForm,
  refusalMessage,
  selectField,
} from "../forms.ts";
import { html, nothing, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import { repositoriesPath } from "./remediation-view.ts";

type RepositoryFormValues = {
  provider: string;
  path: string;
  installationId: string;
  fullName: string;
  defaultBranch: string;
  testCommand: string;
  services: string;
};

const readRepositoryForm = (form: Record<string, unknown>): RepositoryFormValues => ({
  provider: formString(form, "provider"),
  path: formString(form, "path").trim(),
  installationId: formString(form, "installationId").trim(),
  fullName: formString(form, "fullName").trim(),
  defaultBranch: formString(form, "defaultBranch").trim(),
  testCommand: formString(form, "testCommand"),
  services: formString(form, "services"),
});

/** "checkout, payments" or one per line → the API's list. */
const serviceList = (text: string): string[] => text.split(/[\s,]+/).filter((s) => s !== "");

/** The API's body from the flat form; the REST schema then validates it (and words the errors). */
function bodyOf(v: RepositoryFormValues): unknown {
  const common = { testCommand: v.testCommand, services: serviceList(v.services) };
  if (v.provider === "github") {
    return {
      provider: "github",
      installationId: /^\d+$/.test(v.installationId)
        ? Number(v.installationId)
        : v.installationId || undefined,
      fullName: v.fullName,
      ...(v.defaultBranch ? { defaultBranch: v.defaultBranch } : {}),
      ...common,
    };
  }
  return { provider: v.provider, path: v.path, defaultBranch: v.defaultBranch || "main", ...common };
}

/** Error paths (`services.0`) and codes → the form's fields. */
function repositoryFieldErrors(error: unknown): FieldErrors {
  const out: FieldErrors = {};
  const codes = {
    invalid_repository_path: "path",
    invalid_repository: "path",
    service_taken: "services",
    installation_required: "installationId",
    provider_unavailable: "provider",
  };
  for (const [path, message] of Object.entries(fieldErrorsOf(error, codes))) {
    out[path.split(".")[0] ?? path] ??= message;
  }
  return out;
}

/**
 * The GitHub App's install link for this organisation (signed state, one hour), or undefined
 * when no App is configured. Made when the page is shown, so it is a plain link: a redirect
 * from a form to github.com would be blocked by the pages' `form-action 'self'`.
 */
export function githubInstallLink(c: Context<WebEnv>): string | undefined {
  try {
    return createGithubInstallLink({ ctx: c.get("ctx") }).url;
  } catch (error) {
    if (isAppError(error) && (error.code === "provider_unavailable" || error.code === "forbidden"))
      return undefined;
    throw error;
  }
}

function createPage(
  c: Context<WebEnv>,
  state: {
    values?: Partial<RepositoryFormValues>;
    fields?: FieldErrors;
    error?: string;
    status?: ContentfulStatusCode;
  } = {},
) {
  const { current } = c.get("environment");
  const base = repositoriesPath(c.get("org").id, current.id);
  const fields = state.fields ?? {};
  const values = state.values ?? {};
  const install = githubInstallLink(c);
  const providers = [
    { value: "local-git", label: "Local git (a work tree on this server)" },
    ...(install ? [{ value: "github", label: "GitHub (through the GitHub App)" }] : []),
  ];
  return renderPage(c, {
    title: "Register a repository",
    section: "repositories",
    status: state.status ?? 200,
    lead: `The code of one or more services of ${current.name}. patchbay's agent changes a copy of it in a sandbox and proposes fixes on a branch; it never merges.`,
    body: html`${errorSummary(state.error, fields)}
<div class="card">
${postForm(c, {
  action: `${base}/new`,
  body: html`${selectField({ name: "provider", label: "Where the code lives", options: providers, value: values.provider ?? "local-git", error: fields.provider })}
  ${inputField({ name: "services", label: "Services", value: values.services ?? "", error: fields.services, required: true, placeholder: "checkout", hint: "The service.name values (from your telemetry) whose problems this repository fixes, separated by commas. One repository per service.", autocomplete: "off" })}
  <fieldset class="field">
  <legend>Local git</legend>
  ${inputField({ name: "path", label: "Absolute path", value: values.path ?? "", error: fields.path, placeholder: "/srv/git/checkout", hint: "The top level of a git work tree on this server, without symbolic links on the way.", autocomplete: "off" })}
  </fieldset>
  ${when(
    install,
    () => html`<fieldset class="field">
  <legend>GitHub</legend>
  <p class="hint">First <a href="${install ?? ""}">install the GitHub App</a> and select the repository on GitHub; the installation id is in the address GitHub shows afterwards.</p>
  ${inputField({ name: "installationId", label: "Installation id", value: values.installationId ?? "", error: fields.installationId, placeholder: "41234567", autocomplete: "off" })}
  ${inputField({ name: "fullName", label: "Repository (owner/name)", value: values.fullName ?? "", error: fields.fullName, placeholder: "acme/checkout", autocomplete: "off" })}
  </fieldset>`,
  )}
  ${inputField({ name: "defaultBranch", label: "Default branch", value: values.defaultBranch ?? "", error: fields.defaultBranch, placeholder: "main", hint: install ? "Local git: default main. GitHub: default the repository's own." : "Default: main.", autocomplete: "off" })}
  ${inputField({ name: "testCommand", label: "Test command", value: values.testCommand ?? "", error: fields.testCommand, required: true, placeholder: "npm test", hint: "Run with sh -c at the repository root inside the sandbox; exit code 0 means the tests pass.", autocomplete: "off" })}
  <div class="actions"><button type="submit">Register repository</button> <a class="button secondary" href="${base}">Cancel</a></div>`,
})}
</div>
${install ? nothing : html`<p class="muted">GitHub repositories need patchbay's GitHub App, which is not configured on this server (docs/remediation.md).</p>`}`,
  });
}

export function registerRepositoryCreatePages(web: Hono<WebEnv>): void {
  const path = "/orgs/:orgId/environments/:environmentId/repositories/new";

  web.get(path, (c) => {
    const ctx = c.get("ctx");
    // Members get the 403 page here rather than a form that could only fail.
    requirePermission(ctx, "repositories:manage");
    requireOwnerOrAdmin(ctx);
    // Links from an agent's operator steps name what to select (`?service=&provider=github&fullName=…`).
    const query = (name: string) => c.req.query(name) ?? "";
    return createPage(c, {
      values: {
        services: query("service"),
        provider: query("provider") || "local-git",
        fullName: query("fullName"),
        installationId: query("installationId"),
      },
    });
  });

  web.post(path, async (c) => {
    const values = readRepositoryForm(await readForm(c));
    const environmentId = c.get("environment").current.id;
    try {
      const body = parseWith(CreateRepositoryBody, bodyOf(values));
      await createRepository({ ctx: c.get("ctx"), input: { environmentId, ...body } });
      return c.redirect(`${repositoriesPath(c.get("org").id, environmentId)}?done=created`, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      // provider_unavailable (503) belongs next to the provider choice, not on an error page.
      if (error.code !== "provider_unavailable" && (error.status >= 500 || error.code === "forbidden"))
        throw error;
      return createPage(c, {
        values,
        status: error.status as ContentfulStatusCode,
        error: refusalMessage(error),
        fields: repositoryFieldErrors(error),
      });
    }
  });
}
