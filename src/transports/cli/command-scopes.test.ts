import { describe, expect, test } from "vitest";
import { commandScopes, loginScopes } from "./command-scopes.ts";
import { leafCommands } from "./help-examples.ts";
import { buildCompleteProgram } from "./main.ts";

/** Commands that never call the API with a login: the server itself, local files, the login. */
const local = new Set(["serve", "admin", "login", "logout", "profile", "help"]);

describe("the scopes patchbay login asks for", () => {
  test("cover every API command group, so a plain login runs each of them", async () => {
    const program = await buildCompleteProgram();
    const groups = new Set<string>();
    for (const path of leafCommands(program).map(([name]) => name.split(" "))) {
      if (local.has(path[0] ?? "")) continue;
      const group =
        path[0] === "environment" && path.length > 2 ? path.slice(0, 2).join(" ") : (path[0] ?? "");
      groups.add(group);
    }
    expect([...groups].sort()).toEqual(Object.keys(commandScopes).sort());
    expect(loginScopes).toContain("offline_access");
    expect(loginScopes).toContain("repositories:read");
    expect(new Set(loginScopes).size).toBe(loginScopes.length);
  });
});
